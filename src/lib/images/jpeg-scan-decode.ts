/**
 * Huffman entropy decoding of one JPEG scan into quantised coefficients: sequential (T.81 F.2.2)
 * and progressive with spectral selection and successive approximation (G.2), restart intervals
 * included. Coefficients land in natural order in each component's block array.
 */
import { ImageStructureError } from "./exif";
import type { FrameComponent, ScanHeader } from "./jpeg-coefficients";
import { ZIGZAG } from "./jpeg-coefficients";

/** A Huffman table prepared for decoding: a 9-bit lookup plus the F.2.2.3 per-length limits. */
export interface HuffmanDecodeTable {
  /** Indexed by the next 9 bits: (code length << 8) | symbol, or 0 when the code is longer. */
  lookup: Uint16Array;
  maxcode: Int32Array;
  valptr: Int32Array;
  mincode: Int32Array;
  values: Uint8Array;
}

const LOOKUP_BITS = 9;

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};

/** Builds the decoding form of a DHT table (T.81 C.2 and F.2.2.3); rejects over-subscribed tables. */
export function buildDecodeTable(counts: Uint8Array, values: Uint8Array): HuffmanDecodeTable {
  const lookup = new Uint16Array(1 << LOOKUP_BITS);
  const maxcode = new Int32Array(18).fill(-1);
  const valptr = new Int32Array(17);
  const mincode = new Int32Array(17);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    const n = counts[len - 1]!;
    valptr[len] = k;
    mincode[len] = code;
    for (let i = 0; i < n; i++, k++, code++) {
      if (len <= LOOKUP_BITS) {
        const shift = LOOKUP_BITS - len;
        const entry = (len << 8) | values[k]!;
        for (let j = code << shift, end = (code + 1) << shift; j < end; j++) lookup[j] = entry;
      }
    }
    if (n) maxcode[len] = code - 1;
    if (code > 1 << len) fail("over-subscribed Huffman table");
    code <<= 1;
  }
  return { lookup, maxcode, valptr, mincode, values: values.slice() };
}

/**
 * Reads entropy-coded bits, removing stuffed zero bytes. At a marker (or the end of the data) it
 * supplies zero bits and counts them, so running past the real data is detected, not mis-read.
 */
class BitReader {
  buf = 0;
  cnt = 0;
  /** Zero bits supplied after the data ended; consumed ones mean the scan was truncated. */
  fake = 0;
  atMarker = false;
  constructor(
    private readonly data: Uint8Array,
    public pos: number,
  ) {}

  private fill(): void {
    const d = this.data;
    while (this.cnt <= 16) {
      let b = 0;
      if (!this.atMarker && this.pos < d.length) {
        b = d[this.pos]!;
        if (b === 0xff) {
          if (d[this.pos + 1] === 0) this.pos += 2;
          else {
            this.atMarker = true; // leave pos on the marker
            b = 0;
            this.fake += 8;
          }
        } else this.pos++;
      } else {
        this.atMarker = true;
        this.fake += 8;
      }
      this.buf = ((this.buf << 8) | b) & 0xffffff;
      this.cnt += 8;
    }
  }

  decode(t: HuffmanDecodeTable): number {
    if (this.cnt < 16) this.fill();
    const e = t.lookup[(this.buf >>> (this.cnt - LOOKUP_BITS)) & 511]!;
    if (e) {
      this.cnt -= e >> 8;
      return e & 255;
    }
    for (let len = LOOKUP_BITS + 1; len <= 16; len++) {
      const code = (this.buf >>> (this.cnt - len)) & ((1 << len) - 1);
      if (code <= t.maxcode[len]!) {
        this.cnt -= len;
        return t.values[t.valptr[len]! + code - t.mincode[len]!]!;
      }
    }
    return fail("invalid Huffman code");
  }

  receive(n: number): number {
    if (n === 0) return 0;
    if (this.cnt < n) this.fill();
    this.cnt -= n;
    return (this.buf >>> this.cnt) & ((1 << n) - 1);
  }

  /** RECEIVE then EXTEND (F.2.2.1): an n-bit magnitude category to a signed value. */
  signed(n: number): number {
    const v = this.receive(n);
    return n && v < 1 << (n - 1) ? v - (1 << n) + 1 : v;
  }

  checkNotTruncated(): void {
    if (this.fake > this.cnt) fail("entropy-coded data ends early (truncated scan)");
  }

  /** Skips to just past the expected RSTn marker and forgets buffered bits (F.2.2.5 / E.1.4). */
  restart(expected: number): void {
    this.checkNotTruncated();
    const d = this.data;
    let p = this.pos;
    while (p + 1 < d.length && !(d[p] === 0xff && d[p + 1] !== 0 && d[p + 1] !== 0xff)) p++;
    if (p + 1 >= d.length || d[p + 1] !== 0xd0 + expected) fail("missing restart marker");
    this.pos = p + 2;
    this.buf = this.cnt = this.fake = 0;
    this.atMarker = false;
  }
}

/** Decodes one scan; returns the offset of the marker that follows it. */
export function decodeScan(data: Uint8Array, start: number, scan: ScanHeader, mcusX: number, mcusY: number): number {
  const r = new BitReader(data, start);
  const { components, ss, se, ah, al } = scan;
  const preds = new Int32Array(components.length);
  let eobrun = 0;
  const n = components.length;

  let decodeBlock: (c: Int16Array, o: number, ci: number) => void;
  if (!scan.progressive) {
    decodeBlock = (c, o, ci) => {
      const t = r.decode(scan.dcTables[ci]!);
      if (t > 11) fail("bad DC magnitude category");
      c[o] = preds[ci] = preds[ci]! + r.signed(t);
      const ac = scan.acTables[ci]!;
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
    };
  } else if (ss === 0 && ah === 0) {
    decodeBlock = (c, o, ci) => {
      const t = r.decode(scan.dcTables[ci]!);
      if (t > 11) fail("bad DC magnitude category");
      const dc = (preds[ci] = preds[ci]! + r.signed(t));
      c[o] = dc * (1 << al);
    };
  } else if (ss === 0) {
    decodeBlock = (c, o) => {
      if (r.receive(1)) c[o] = c[o]! | (1 << al);
    };
  } else if (ah === 0) {
    decodeBlock = (c, o, ci) => {
      if (eobrun > 0) {
        eobrun--;
        return;
      }
      const ac = scan.acTables[ci]!;
      for (let k = ss; k <= se; ) {
        const rs = r.decode(ac);
        const s = rs & 15;
        const run = rs >> 4;
        if (s === 0) {
          if (run < 15) {
            eobrun = (1 << run) - 1 + r.receive(run);
            break;
          }
          k += 16;
          continue;
        }
        k += run;
        if (k > se) fail("coefficient index past the band");
        c[o + ZIGZAG[k]!] = r.signed(s) * (1 << al);
        k++;
      }
    };
  } else {
    decodeBlock = (c, o, ci) => refineAc(r, c, o, scan.acTables[ci]!);
  }

  // G.1.2.3: refinement of AC coefficients, correcting bits of already non-zero ones on the way.
  function refineAc(rd: BitReader, c: Int16Array, o: number, table: HuffmanDecodeTable): void {
    const p1 = 1 << al;
    const m1 = -1 << al;
    let k = ss;
    if (eobrun === 0) {
      for (; k <= se; k++) {
        const rs = rd.decode(table);
        let run = rs >> 4;
        const s = rs & 15;
        let value = 0;
        if (s) {
          if (s !== 1) fail("bad refinement magnitude");
          value = rd.receive(1) ? p1 : m1;
        } else if (run !== 15) {
          eobrun = (1 << run) + rd.receive(run);
          break;
        }
        while (k <= se) {
          const z = o + ZIGZAG[k]!;
          const cur = c[z]!;
          if (cur !== 0) {
            if (rd.receive(1) && (cur & p1) === 0) c[z] = cur >= 0 ? cur + p1 : cur + m1;
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
    if (eobrun > 0) {
      for (; k <= se; k++) {
        const z = o + ZIGZAG[k]!;
        const cur = c[z]!;
        if (cur !== 0 && rd.receive(1) && (cur & p1) === 0) c[z] = cur >= 0 ? cur + p1 : cur + m1;
      }
      eobrun--;
    }
  }

  const ri = scan.restartInterval;
  let sinceRestart = 0;
  let nextRst = 0;
  const maybeRestart = (done: number, total: number): void => {
    if (ri === 0 || done === total) return;
    if (++sinceRestart < ri) return;
    r.restart(nextRst);
    nextRst = (nextRst + 1) & 7;
    sinceRestart = 0;
    preds.fill(0);
    eobrun = 0;
  };

  if (n === 1) {
    // Non-interleaved: the MCU is a single block and only the data-carrying blocks are coded (A.2.2).
    const comp: FrameComponent = components[0]!;
    const w = comp.dataBlocksWide;
    const h = comp.dataBlocksHigh;
    const total = w * h;
    for (let by = 0, done = 0; by < h; by++) {
      for (let bx = 0; bx < w; bx++) {
        decodeBlock(comp.coeffs, (by * comp.blocksWide + bx) * 64, 0);
        r.checkNotTruncated();
        maybeRestart(++done, total);
      }
    }
  } else {
    const total = mcusX * mcusY;
    for (let my = 0, done = 0; my < mcusY; my++) {
      for (let mx = 0; mx < mcusX; mx++) {
        for (let ci = 0; ci < n; ci++) {
          const comp = components[ci]!;
          for (let y = 0; y < comp.v; y++) {
            const row = (my * comp.v + y) * comp.blocksWide + mx * comp.h;
            for (let x = 0; x < comp.h; x++) decodeBlock(comp.coeffs, (row + x) * 64, ci);
          }
        }
        r.checkNotTruncated();
        maybeRestart(++done, total);
      }
    }
  }
  r.checkNotTruncated();
  // The scan ends at the next marker that is not RSTn; skip any padding before it.
  let p = r.pos;
  while (p + 1 < data.length && !(data[p] === 0xff && data[p + 1] !== 0 && (data[p + 1]! & 0xf8) !== 0xd0)) p++;
  return p + 1 < data.length ? p : data.length;
}
