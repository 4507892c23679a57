/**
 * Decoding of one block's share of a scan (ITU T.81 F.2.2 sequential, G.2 progressive), into
 * coefficients (natural order) or, for a block that is not kept, into the map of its non-zero
 * coefficients that later refinement scans need (two words, bit k for zig-zag position k).
 */
import { ImageStructureError } from "./exif";
import type { BitReader, HuffmanDecodeTable } from "./jpeg-bit-reader";
import { ZIGZAG } from "./jpeg-parse";

/** Scan state the AC decoders share across blocks: the end-of-band run left (G.1.2.2). */
export interface EobState {
  eobrun: number;
}

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};

/** A whole block of a sequential scan; `preds[ci]` is the component's DC predictor. */
export function decodeSequential(
  r: BitReader,
  c: Int16Array,
  o: number,
  dc: HuffmanDecodeTable,
  ac: HuffmanDecodeTable,
  preds: Int32Array,
  ci: number,
): void {
  const t = r.decode(dc);
  if (t > 11) fail("bad DC magnitude category");
  c[o] = preds[ci] = preds[ci]! + r.signed(t);
  for (let k = 1; k < 64; ) {
    const rs = r.decode(ac);
    const s = rs & 15;
    if (s === 0) {
      if (rs !== 0xf0) break;
      k += 16;
      continue;
    }
    k += rs >> 4;
    if (k > 63) fail("coefficient index past the block");
    c[o + ZIGZAG[k]!] = r.signed(s);
    k++;
  }
}

/** The first DC scan of a progressive image, point transform `al`. */
export function decodeDcFirst(
  r: BitReader,
  c: Int16Array,
  o: number,
  dc: HuffmanDecodeTable,
  preds: Int32Array,
  ci: number,
  al: number,
): void {
  const t = r.decode(dc);
  if (t > 11) fail("bad DC magnitude category");
  const v = (preds[ci] = preds[ci]! + r.signed(t));
  c[o] = v * (1 << al);
}

/** A first AC scan of band `ss`..`se`; with `c` undefined the new non-zero positions go to `bits[at..at+1]`. */
export function decodeAcFirst(
  r: BitReader,
  st: EobState,
  c: Int16Array | undefined,
  o: number,
  bits: Int32Array | undefined,
  at: number,
  table: HuffmanDecodeTable,
  ss: number,
  se: number,
  al: number,
): void {
  if (st.eobrun > 0) {
    st.eobrun--;
    return;
  }
  for (let k = ss; k <= se; ) {
    const rs = r.decode(table);
    const s = rs & 15;
    const run = rs >> 4;
    if (s === 0) {
      if (run < 15) {
        st.eobrun = (1 << run) - 1 + r.receive(run);
        break;
      }
      k += 16;
      continue;
    }
    k += run;
    if (k > se) fail("coefficient index past the band");
    const v = r.signed(s);
    if (c !== undefined) c[o + ZIGZAG[k]!] = v * (1 << al);
    else bits![at + (k >> 5)]! |= 1 << (k & 31);
    k++;
  }
}

/** G.1.2.3: refinement of band `ss`..`se` at bit `al`, correcting already non-zero coefficients on the way. */
export function decodeAcRefine(
  r: BitReader,
  st: EobState,
  c: Int16Array,
  o: number,
  table: HuffmanDecodeTable,
  ss: number,
  se: number,
  al: number,
): void {
  const p1 = 1 << al;
  const m1 = -1 << al;
  let k = ss;
  if (st.eobrun === 0) {
    for (; k <= se; k++) {
      const rs = r.decode(table);
      let run = rs >> 4;
      const s = rs & 15;
      let value = 0;
      if (s) {
        if (s !== 1) fail("bad refinement magnitude");
        value = r.receive(1) ? p1 : m1;
      } else if (run !== 15) {
        st.eobrun = (1 << run) + r.receive(run);
        break;
      }
      while (k <= se) {
        const z = o + ZIGZAG[k]!;
        const cur = c[z]!;
        if (cur !== 0) {
          if (r.receive(1) && (cur & p1) === 0) c[z] = cur >= 0 ? cur + p1 : cur + m1;
        } else {
          if (run === 0) break;
          run--;
        }
        k++;
      }
      if (value) {
        if (k > se) fail("coefficient index past the band");
        c[o + ZIGZAG[k]!] = value;
      }
    }
  }
  if (st.eobrun > 0) {
    for (; k <= se; k++) {
      const z = o + ZIGZAG[k]!;
      const cur = c[z]!;
      if (cur !== 0 && r.receive(1) && (cur & p1) === 0) c[z] = cur >= 0 ? cur + p1 : cur + m1;
    }
    st.eobrun--;
  }
}

/** `decodeAcRefine` for a block known only by its non-zero map `bits[at..at+1]`: reads the same bits, updates the map. */
export function skipAcRefine(
  r: BitReader,
  st: EobState,
  bits: Int32Array,
  at: number,
  table: HuffmanDecodeTable,
  ss: number,
  se: number,
): void {
  let lo = bits[at]!;
  let hi = bits[at + 1]!;
  const nonzero = (k: number): boolean => ((k < 32 ? lo >>> k : hi >>> (k - 32)) & 1) !== 0;
  let k = ss;
  if (st.eobrun === 0) {
    for (; k <= se; k++) {
      const rs = r.decode(table);
      let run = rs >> 4;
      const s = rs & 15;
      if (s) {
        if (s !== 1) fail("bad refinement magnitude");
        r.receive(1);
      } else if (run !== 15) {
        st.eobrun = (1 << run) + r.receive(run);
        break;
      }
      while (k <= se) {
        if (nonzero(k)) r.receive(1);
        else if (run === 0) break;
        else run--;
        k++;
      }
      if (s) {
        if (k > se) fail("coefficient index past the band");
        if (k < 32) lo |= 1 << k;
        else hi |= 1 << (k - 32);
      }
    }
  }
  if (st.eobrun > 0) {
    // One correction bit per non-zero coefficient left in the band: read them in bulk.
    for (let n = nonzeroIn(lo, hi, k, se); n > 0; n -= 16) r.receive(n > 16 ? 16 : n);
    st.eobrun--;
  }
  bits[at] = lo;
  bits[at + 1] = hi;
}

/** Set bits of the 64-bit map (lo, hi) at positions `a` to `b`. */
function nonzeroIn(lo: number, hi: number, a: number, b: number): number {
  if (a > b) return 0;
  const mask = (from: number, to: number): number => (to - from >= 31 ? -1 : ((1 << (to - from + 1)) - 1) << from);
  let n = 0;
  if (a < 32) n += popcount(lo & mask(a, Math.min(b, 31)));
  if (b >= 32) n += popcount(hi & mask(Math.max(a, 32) - 32, b - 32));
  return n;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 63;
}
