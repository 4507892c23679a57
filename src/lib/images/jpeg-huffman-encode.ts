/**
 * The bit level of a JPEG writer (ITU T.81): Huffman code lengths from symbol counts (Annex K.2)
 * and an output buffer that stuffs a zero after every 0xFF of entropy-coded data (F.1.2.3).
 */

/** Bit length of |v| (the magnitude category SSSS of F.1.2.1). */
export function category(v: number): number {
  return 32 - Math.clz32(v < 0 ? -v : v);
}

/** A Huffman table as DHT lists it (`counts`, `values`) and as the writer uses it (`code`, `size` by symbol). */
export interface HuffmanCode {
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
export class Writer {
  buf: Uint8Array;
  len = 0;
  /** Bits not yet written (`nbits` of them, at most 7 between calls). */
  acc = 0;
  nbits = 0;
  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(1024, capacity));
  }
  /** Makes room for `extra` more bytes. */
  reserve(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length + (this.buf.length >> 2), this.len + extra + 1024));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  bytes(b: ArrayLike<number>): void {
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  bits(value: number, n: number): void {
    this.acc = (this.acc << n) | value;
    this.nbits += n;
    while (this.nbits >= 8) {
      this.nbits -= 8;
      const b = (this.acc >>> this.nbits) & 255;
      this.reserve(2);
      this.buf[this.len++] = b;
      if (b === 0xff) this.buf[this.len++] = 0;
    }
    this.acc &= (1 << this.nbits) - 1;
  }
  flushBits(): void {
    if (this.nbits) this.bits((1 << (8 - this.nbits)) - 1, 8 - this.nbits); // pad with 1-bits (F.1.2.3)
  }
}
