/**
 * Baseline sequential JPEG writer from quantised coefficients (T.81 F.1.2): one interleaved scan
 * (or one block-per-MCU scan for a single component), Huffman tables optimised for the image
 * (Annex K.2) from a counting pass, so no symbol can be missing from a table. Both passes can be
 * fed a band of MCU rows at a time, the DC predictors and the bit position carried across bands.
 */
import { ImageStructureError } from "./exif";
import { buildHuffmanCode, category, type HuffmanCode, Writer } from "./jpeg-huffman-encode";
import { ZIGZAG } from "./jpeg-parse";

export { buildHuffmanCode };

/** Where a component's coefficients are read from. */
export interface BlockSource {
  coeffs: Int16Array;
  /** Offset in `coeffs` of the source block shown at output block column `bx`, row `by`. */
  blockOffset(bx: number, by: number): number;
}

/** A component as it will be written. */
export interface EncodeComponentLayout {
  id: number;
  h: number;
  v: number;
  tq: number;
}

/** A component as it will be written, with its coefficients. */
export interface EncodeComponent extends EncodeComponentLayout, BlockSource {}

/** Everything about a frame except its coefficients. */
export interface EncodeLayout {
  width: number;
  height: number;
  components: EncodeComponentLayout[];
  /** By selector, natural order, already in the output orientation. */
  quantTables: (Uint16Array | undefined)[];
  /** For output zig-zag position k: the natural index read from the source block and its sign. */
  order: Uint8Array;
  sign: Int8Array;
  /** Segments (marker included) written between SOI and the frame. */
  segments: Uint8Array[];
}

/** Everything needed to write a frame. */
export interface EncodeFrame extends EncodeLayout {
  components: EncodeComponent[];
}

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};

/** Identity block order: output position k reads the natural index of k. */
export const IDENTITY_ORDER: Uint8Array = ZIGZAG;
export const IDENTITY_SIGN: Int8Array = new Int8Array(64).fill(1);

/** Bytes one block can take in the scan: 64 codes of at most 16 + 10 bits, each byte possibly stuffed. */
const MAX_BLOCK_BYTES = 448;

const segment = (marker: number, body: number[]): number[] => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];

/**
 * Writes a baseline JPEG in two passes over the MCU rows: `count` every row (in order, in as many
 * calls as wanted), then `start`, then `write` every row in order, then `finish`.
 */
export class BaselineEncoder {
  readonly mcusX: number;
  readonly mcusY: number;
  private readonly single: boolean;
  /** Blocks of one MCU row in scan order: where each is read, and its component. */
  private readonly offsets: Int32Array;
  private readonly owners: Uint8Array;
  private readonly dcFreq = [new Float64Array(256), new Float64Array(256)];
  private readonly acFreq = [new Float64Array(256), new Float64Array(256)];
  private preds: Int32Array;
  private extraBits = 0;
  private dcCodes: HuffmanCode[] = [];
  private acCodes: HuffmanCode[] = [];
  private out: Writer | undefined;

  constructor(private readonly layout: EncodeLayout) {
    const comps = layout.components;
    this.single = comps.length === 1;
    const hmax = this.single ? 1 : Math.max(...comps.map((c) => c.h));
    const vmax = this.single ? 1 : Math.max(...comps.map((c) => c.v));
    this.mcusX = Math.ceil(layout.width / (8 * hmax));
    this.mcusY = Math.ceil(layout.height / (8 * vmax));
    this.preds = new Int32Array(comps.length);
    let perMcu = 0;
    for (const c of comps) perMcu += this.single ? 1 : c.h * c.v;
    this.offsets = new Int32Array(this.mcusX * perMcu);
    this.owners = new Uint8Array(this.mcusX * perMcu);
  }

  /** Fills `offsets` and `owners` for MCU row `my`; returns the number of blocks. */
  private rowBlocks(sources: BlockSource[], my: number): number {
    const comps = this.layout.components;
    let n = 0;
    for (let mx = 0; mx < this.mcusX; mx++) {
      for (let ci = 0; ci < comps.length; ci++) {
        const c = comps[ci]!;
        const h = this.single ? 1 : c.h;
        const v = this.single ? 1 : c.v;
        const source = sources[ci]!;
        for (let y = 0; y < v; y++) {
          for (let x = 0; x < h; x++) {
            this.offsets[n] = source.blockOffset(mx * h + x, my * v + y);
            this.owners[n++] = ci;
          }
        }
      }
    }
    return n;
  }

  /** Counting pass over MCU rows `my0` to `my1 - 1`. */
  count(sources: BlockSource[], my0: number, my1: number): void {
    const { order, sign } = this.layout;
    const { preds, offsets, owners } = this;
    let extraBits = 0;
    for (let my = my0; my < my1; my++) {
      const n = this.rowBlocks(sources, my);
      for (let i = 0; i < n; i++) {
        const ci = owners[i]!;
        const src = sources[ci]!.coeffs;
        const o = offsets[i]!;
        const t = ci === 0 ? 0 : 1;
        const dcValue = src[o + order[0]!]! * sign[0]!;
        const dc = category(dcValue - preds[ci]!);
        if (dc > 11) fail("DC difference out of range for 8-bit JPEG");
        preds[ci] = dcValue;
        this.dcFreq[t]![dc]!++;
        extraBits += dc;
        const ac = this.acFreq[t]!;
        let run = 0;
        for (let k = 1; k < 64; k++) {
          const v = src[o + order[k]!]!;
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
      }
    }
    this.extraBits += extraBits;
  }

  /** Ends counting: builds the tables and writes everything up to the scan data. */
  start(): void {
    const { layout } = this;
    const comps = layout.components;
    const tables = comps.length === 1 ? 1 : 2;
    this.dcCodes = this.dcFreq.slice(0, tables).map(buildHuffmanCode);
    this.acCodes = this.acFreq.slice(0, tables).map(buildHuffmanCode);
    let dataBits = this.extraBits;
    for (let t = 0; t < tables; t++) {
      for (let s = 0; s < 256; s++)
        dataBits += this.dcFreq[t]![s]! * this.dcCodes[t]!.size[s]! + this.acFreq[t]![s]! * this.acCodes[t]!.size[s]!;
    }
    let headerBytes = 1024;
    for (const s of layout.segments) headerBytes += s.length;
    // Exact data size plus room for stuffed zero bytes (about 1 in 256 for compressed data).
    const dataBytes = Math.ceil(dataBits / 8);
    const w = (this.out = new Writer(headerBytes + dataBytes + (dataBytes >> 7)));
    w.bytes([0xff, 0xd8]);
    for (const s of layout.segments) w.bytes(s);

    const used = [...new Set(comps.map((c) => c.tq))];
    let wide = false;
    for (const tq of used) {
      const q = layout.quantTables[tq] ?? fail(`missing quantisation table ${tq}`);
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
    const sof = [8, layout.height >> 8, layout.height & 255, layout.width >> 8, layout.width & 255, comps.length];
    for (const c of comps) sof.push(c.id, this.single ? 0x11 : (c.h << 4) | c.v, c.tq);
    w.bytes(segment(wide ? 0xc1 : 0xc0, sof));
    const dht: number[] = [];
    for (let t = 0; t < tables; t++) {
      for (const [tc, hc] of [[0, this.dcCodes[t]!] as const, [1, this.acCodes[t]!] as const])
        dht.push((tc << 4) | t, ...hc.counts, ...hc.values);
    }
    w.bytes(segment(0xc4, dht));
    const tableOf = (ci: number): number => (ci === 0 ? 0 : 1);
    const sos = [comps.length];
    comps.forEach((c, ci) => sos.push(c.id, (tableOf(ci) << 4) | tableOf(ci)));
    sos.push(0, 63, 0);
    w.bytes(segment(0xda, sos));
    this.preds = new Int32Array(comps.length);
  }

  /** Writing pass over MCU rows `my0` to `my1 - 1`. */
  write(sources: BlockSource[], my0: number, my1: number): void {
    const w = this.out ?? fail("start() must come before write()");
    const { order, sign } = this.layout;
    const { preds, offsets, owners } = this;
    // The bit writer's state lives in locals for the duration of the pass.
    let { buf, len, acc, nbits } = w;
    const put = (value: number, n: number): void => {
      acc = (acc << n) | value;
      nbits += n;
      while (nbits >= 8) {
        nbits -= 8;
        const b = (acc >>> nbits) & 255;
        buf[len++] = b;
        if (b === 0xff) buf[len++] = 0;
      }
      acc &= (1 << nbits) - 1;
    };
    for (let my = my0; my < my1; my++) {
      const n = this.rowBlocks(sources, my);
      for (let i = 0; i < n; i++) {
        if (len + MAX_BLOCK_BYTES > buf.length) {
          w.len = len;
          w.reserve(MAX_BLOCK_BYTES);
          buf = w.buf;
        }
        const ci = owners[i]!;
        const src = sources[ci]!.coeffs;
        const o = offsets[i]!;
        const t = ci === 0 ? 0 : 1;
        const dcCode = this.dcCodes[t]!;
        const acCode = this.acCodes[t]!;
        const dcValue = src[o + order[0]!]! * sign[0]!;
        const diff = dcValue - preds[ci]!;
        preds[ci] = dcValue;
        const dc = category(diff);
        // A code and its extra bits go out together (at most 16 + 11 bits: in two steps past 24).
        const dcSize = dcCode.size[dc]!;
        const dcExtra = (diff < 0 ? diff - 1 : diff) & ((1 << dc) - 1);
        if (dcSize + dc <= 24) put((dcCode.code[dc]! << dc) | dcExtra, dcSize + dc);
        else {
          put(dcCode.code[dc]!, dcSize);
          put(dcExtra, dc);
        }
        let run = 0;
        for (let k = 1; k < 64; k++) {
          const v = src[o + order[k]!]! * sign[k]!;
          if (v === 0) {
            run++;
            continue;
          }
          for (; run > 15; run -= 16) put(acCode.code[0xf0]!, acCode.size[0xf0]!);
          const s = category(v);
          const rs = (run << 4) | s;
          const size = acCode.size[rs]!;
          const extra = (v < 0 ? v - 1 : v) & ((1 << s) - 1);
          if (size + s <= 24) put((acCode.code[rs]! << s) | extra, size + s);
          else {
            put(acCode.code[rs]!, size);
            put(extra, s);
          }
          run = 0;
        }
        if (run) put(acCode.code[0]!, acCode.size[0]!);
      }
    }
    w.buf = buf;
    w.len = len;
    w.acc = acc;
    w.nbits = nbits;
  }

  /** Ends the scan and the file; returns the JPEG. */
  finish(): Uint8Array {
    const w = this.out ?? fail("start() must come before finish()");
    w.flushBits();
    w.bytes([0xff, 0xd9]);
    return w.buf.subarray(0, w.len);
  }
}

/** Writes `frame` as a baseline JPEG (SOF1 instead when a quantisation table needs 16-bit entries). */
export function encodeBaselineJpeg(frame: EncodeFrame): Uint8Array {
  const encoder = new BaselineEncoder(frame);
  encoder.count(frame.components, 0, encoder.mcusY);
  encoder.start();
  encoder.write(frame.components, 0, encoder.mcusY);
  return encoder.finish();
}
