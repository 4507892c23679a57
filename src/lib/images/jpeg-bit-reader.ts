/**
 * The bit level of JPEG entropy-coded data (ITU T.81 F.2.2): Huffman tables prepared for decoding,
 * and a reader that removes stuffed zero bytes and stops at markers. Its whole state is a few
 * integers, so a decoder can note where it stood and come back there later.
 */
import { ImageStructureError } from "./exif";

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
export class BitReader {
  /** At most 24 buffered bits, the next one at bit `cnt - 1`. */
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
