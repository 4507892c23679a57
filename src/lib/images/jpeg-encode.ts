/**
 * Baseline sequential JPEG writer from quantised coefficients (T.81 F.1.2): one interleaved scan
 * (or one block-per-MCU scan for a single component), Huffman tables optimised for the image
 * (Annex K.2) from a counting pass, so no symbol can be missing from a table.
 */
import { ImageStructureError } from "./exif";
import { ZIGZAG } from "./jpeg-coefficients";

/** A component as it will be written. */
export interface EncodeComponent {
  id: number;
  h: number;
  v: number;
  tq: number;
  coeffs: Int16Array;
  /** Offset in `coeffs` of the source block shown at output block column `bx`, row `by`. */
  blockOffset(bx: number, by: number): number;
}

/** Everything needed to write a frame. */
export interface EncodeFrame {
  width: number;
  height: number;
  components: EncodeComponent[];
  /** By selector, natural order, already in the output orientation. */
  quantTables: (Uint16Array | undefined)[];
  /** For output zig-zag position k: the natural index read from the source block and its sign. */
  order: Uint8Array;
  sign: Int8Array;
  /** Segments (marker included) written between SOI and the frame. */
  segments: Uint8Array[];
}

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};

/** Identity block order: output position k reads the natural index of k. */
export const IDENTITY_ORDER: Uint8Array = ZIGZAG;
export const IDENTITY_SIGN: Int8Array = new Int8Array(64).fill(1);

/** Bit length of |v| (the magnitude category SSSS of F.1.2.1). */
function category(v: number): number {
  let a = v < 0 ? -v : v;
  let n = 0;
  while (a) {
    n++;
    a >>= 1;
  }
  return n;
}

interface HuffmanCode {
  counts: Uint8Array;
  values: Uint8Array;
  code: Uint16Array;
  size: Uint8Array;
}

/** Code lengths from symbol frequencies (K.2, figures K.1-K.4), limited to 16 bits. */
export function buildHuffmanCode(freq: Float64Array): HuffmanCode {
  const f = Float64Array.from(freq.subarray(0, 256));
  const size = new Int32Array(257);
  const others = new Int32Array(257).fill(-1);
  const fr = new Float64Array(257);
  fr.set(f);
  fr[256] = 1; // reserved symbol: no real code becomes all ones
  for (;;) {
    let c1 = -1;
    let c2 = -1;
    for (let i = 0; i <= 256; i++) if (fr[i] && (c1 < 0 || fr[i]! <= fr[c1]!)) c1 = i;
    for (let i = 0; i <= 256; i++) if (fr[i] && i !== c1 && (c2 < 0 || fr[i]! <= fr[c2]!)) c2 = i;
    if (c2 < 0) break;
    fr[c1] = fr[c1]! + fr[c2]!;
    fr[c2] = 0;
    size[c1]!++;
    while (others[c1]! >= 0) size[(c1 = others[c1]!)]!++;
    others[c1] = c2;
    size[c2]!++;
    while (others[c2]! >= 0) size[(c2 = others[c2]!)]!++;
  }
  const bits = new Int32Array(258);
  for (let i = 0; i <= 256; i++) if (size[i]) bits[size[i]!]!++;
  for (let i = 257; i > 16; i--) {
    while (bits[i]! > 0) {
      let j = i - 2;
      while (bits[j] === 0) j--;
      bits[i]! -= 2;
      bits[i - 1]!++;
      bits[j + 1]! += 2;
      bits[j]!--;
    }
  }
  let last = 16;
  while (bits[last] === 0) last--;
  bits[last]!--; // drop the reserved symbol's code, the longest
  const values: number[] = [];
  for (let len = 1; len <= 257; len++) for (let s = 0; s < 256; s++) if (size[s] === len) values.push(s);
  const counts = new Uint8Array(16);
  for (let i = 1; i <= 16; i++) counts[i - 1] = bits[i]!;
  const code = new Uint16Array(256);
  const codeSize = new Uint8Array(256);
  let c = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++, c <<= 1) {
    for (let i = 0; i < counts[len - 1]!; i++, k++, c++) {
      code[values[k]!] = c;
      codeSize[values[k]!] = len;
    }
  }
  return { counts, values: Uint8Array.from(values), code, size: codeSize };
}

/** Growable output with byte stuffing for entropy-coded data. */
class Writer {
  buf: Uint8Array;
  len = 0;
  private acc = 0;
  private nbits = 0;
  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(1024, capacity));
  }
  private grow(extra: number): void {
    const next = new Uint8Array(Math.max(this.buf.length + (this.buf.length >> 2), this.len + extra + 1024));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  bytes(b: ArrayLike<number>): void {
    if (this.len + b.length > this.buf.length) this.grow(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  bits(value: number, n: number): void {
    this.acc = (this.acc << n) | value;
    this.nbits += n;
    while (this.nbits >= 8) {
      this.nbits -= 8;
      const b = (this.acc >>> this.nbits) & 255;
      if (this.len + 2 > this.buf.length) this.grow(2);
      this.buf[this.len++] = b;
      if (b === 0xff) this.buf[this.len++] = 0;
    }
    this.acc &= (1 << this.nbits) - 1;
  }
  flushBits(): void {
    if (this.nbits) this.bits((1 << (8 - this.nbits)) - 1, 8 - this.nbits); // pad with 1-bits (F.1.2.3)
  }
}

const segment = (marker: number, body: number[]): number[] => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];

/** Writes `frame` as a baseline JPEG (SOF1 instead when a quantisation table needs 16-bit entries). */
export function encodeBaselineJpeg(frame: EncodeFrame): Uint8Array {
  const comps = frame.components;
  const single = comps.length === 1;
  const hmax = single ? 1 : Math.max(...comps.map((c) => c.h));
  const vmax = single ? 1 : Math.max(...comps.map((c) => c.v));
  const mcusX = Math.ceil(frame.width / (8 * hmax));
  const mcusY = Math.ceil(frame.height / (8 * vmax));
  const tableOf = (ci: number): number => (ci === 0 ? 0 : 1);
  const { order, sign } = frame;
  const block = new Int32Array(64);

  // One walk over the blocks in scan order serves the counting pass and the writing pass.
  const walk = (visit: (ci: number) => void): void => {
    for (let my = 0; my < mcusY; my++) {
      for (let mx = 0; mx < mcusX; mx++) {
        for (let ci = 0; ci < comps.length; ci++) {
          const c = comps[ci]!;
          const h = single ? 1 : c.h;
          const v = single ? 1 : c.v;
          for (let y = 0; y < v; y++) {
            for (let x = 0; x < h; x++) {
              const o = c.blockOffset(mx * h + x, my * v + y);
              const src = c.coeffs;
              for (let k = 0; k < 64; k++) block[k] = src[o + order[k]!]! * sign[k]!;
              visit(ci);
            }
          }
        }
      }
    }
  };

  const dcFreq = [new Float64Array(256), new Float64Array(256)];
  const acFreq = [new Float64Array(256), new Float64Array(256)];
  let preds = new Int32Array(comps.length);
  let extraBits = 0;
  walk((ci) => {
    const t = tableOf(ci);
    const dc = category(block[0]! - preds[ci]!);
    if (dc > 11) fail("DC difference out of range for 8-bit JPEG");
    preds[ci] = block[0]!;
    dcFreq[t]![dc]!++;
    extraBits += dc;
    const ac = acFreq[t]!;
    let run = 0;
    for (let k = 1; k < 64; k++) {
      const v = block[k]!;
      if (v === 0) {
        run++;
        continue;
      }
      for (; run > 15; run -= 16) ac[0xf0]!++;
      const s = category(v);
      if (s > 10) fail("AC coefficient out of range for 8-bit JPEG");
      ac[(run << 4) | s]!++;
      extraBits += s;
      run = 0;
    }
    if (run) ac[0]!++;
  });

  const tables = comps.length === 1 ? 1 : 2;
  const dcCodes = dcFreq.slice(0, tables).map(buildHuffmanCode);
  const acCodes = acFreq.slice(0, tables).map(buildHuffmanCode);
  let dataBits = extraBits;
  for (let t = 0; t < tables; t++) {
    for (let s = 0; s < 256; s++) dataBits += dcFreq[t]![s]! * dcCodes[t]!.size[s]! + acFreq[t]![s]! * acCodes[t]!.size[s]!;
  }

  let headerBytes = 1024;
  for (const s of frame.segments) headerBytes += s.length;
  // Exact data size plus room for stuffed zero bytes (about 1 in 256 for compressed data).
  const dataBytes = Math.ceil(dataBits / 8);
  const w = new Writer(headerBytes + dataBytes + (dataBytes >> 7));
  w.bytes([0xff, 0xd8]);
  for (const s of frame.segments) w.bytes(s);

  const used = [...new Set(comps.map((c) => c.tq))];
  let wide = false;
  for (const tq of used) {
    const q = frame.quantTables[tq] ?? fail(`missing quantisation table ${tq}`);
    const pq = q.some((x) => x > 255) ? 1 : 0;
    wide ||= pq === 1;
    const body = [(pq << 4) | tq];
    for (let k = 0; k < 64; k++) {
      const x = q[ZIGZAG[k]!]!;
      if (pq) body.push(x >> 8);
      body.push(x & 255);
    }
    w.bytes(segment(0xdb, body));
  }
  const sof = [8, frame.height >> 8, frame.height & 255, frame.width >> 8, frame.width & 255, comps.length];
  for (const c of comps) sof.push(c.id, single ? 0x11 : (c.h << 4) | c.v, c.tq);
  w.bytes(segment(wide ? 0xc1 : 0xc0, sof));
  const dht: number[] = [];
  for (let t = 0; t < tables; t++) {
    for (const [tc, hc] of [[0, dcCodes[t]!] as const, [1, acCodes[t]!] as const]) dht.push((tc << 4) | t, ...hc.counts, ...hc.values);
  }
  w.bytes(segment(0xc4, dht));
  const sos = [comps.length];
  comps.forEach((c, ci) => sos.push(c.id, (tableOf(ci) << 4) | tableOf(ci)));
  sos.push(0, 63, 0);
  w.bytes(segment(0xda, sos));

  preds = new Int32Array(comps.length);
  walk((ci) => {
    const t = tableOf(ci);
    const dcCode = dcCodes[t]!;
    const acCode = acCodes[t]!;
    const diff = block[0]! - preds[ci]!;
    preds[ci] = block[0]!;
    const dc = category(diff);
    w.bits(dcCode.code[dc]!, dcCode.size[dc]!);
    if (dc) w.bits((diff < 0 ? diff - 1 : diff) & ((1 << dc) - 1), dc);
    let run = 0;
    for (let k = 1; k < 64; k++) {
      const v = block[k]!;
      if (v === 0) {
        run++;
        continue;
      }
      for (; run > 15; run -= 16) w.bits(acCode.code[0xf0]!, acCode.size[0xf0]!);
      const s = category(v);
      const rs = (run << 4) | s;
      w.bits(acCode.code[rs]!, acCode.size[rs]!);
      w.bits((v < 0 ? v - 1 : v) & ((1 << s) - 1), s);
      run = 0;
    }
    if (run) w.bits(acCode.code[0]!, acCode.size[0]!);
  });
  w.flushBits();
  w.bytes([0xff, 0xd9]);
  return w.buf.subarray(0, w.len);
}
