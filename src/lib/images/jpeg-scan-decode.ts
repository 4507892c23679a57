/**
 * Huffman entropy decoding of one JPEG scan into quantised coefficients: sequential (T.81 F.2.2)
 * and progressive with spectral selection and successive approximation (G.2), restart intervals
 * included. A decoder walks the scan's units (MCUs, or blocks of a non-interleaved scan) row by
 * row and can stop, note its state and resume there, so callers may decode a scan piece by piece
 * and keep only the blocks of a region.
 */
import { BitReader, type HuffmanDecodeTable } from "./jpeg-bit-reader";
import { decodeAcFirst, decodeAcRefine, decodeDcFirst, decodeSequential, type EobState, skipAcRefine } from "./jpeg-block-decode";
import type { JpegComponent, JpegScan } from "./jpeg-parse";

/** Where a component's blocks are kept: a rectangle of its block grid, 64 coefficients per block, natural order. */
export interface BlockRegion {
  coeffs: Int16Array;
  x0: number;
  y0: number;
  /** Size in blocks; rows of `w` blocks follow each other in `coeffs`. */
  w: number;
  h: number;
}

/** A decoder positioned somewhere in one scan. */
export interface ScanDecoder {
  /** Units per row and rows of units. */
  readonly unitsX: number;
  readonly unitsY: number;
  /** Per scan component: where its blocks go; blocks outside are decoded and dropped. */
  readonly regions: (BlockRegion | undefined)[];
  /**
   * Per scan component: which coefficients of each dropped block are non-zero (two words per
   * block of the component's grid, bit k for zig-zag position k). Refinement scans read a
   * correction bit for every non-zero coefficient, so dropping blocks of a progressive image
   * needs this much of them.
   */
  readonly shadows: (Int32Array | undefined)[];
  /** Int32 values `save` writes. */
  readonly stateSize: number;
  /** Decodes units `c0` to `c1 - 1` of unit row `row`; the decoder must stand at the first of them. */
  decodeUnits(row: number, c0: number, c1: number): void;
  save(out: Int32Array, at: number): void;
  restore(src: Int32Array, at: number): void;
}

/** Whether a scan carries DC values coded as differences, whose predictors are part of the state. */
const hasPredictors = (scan: JpegScan): boolean => scan.ss === 0 && scan.ah === 0;

/** Int32 values of a decoder's saved state for `scan`. */
export const scanStateSize = (scan: JpegScan): number => 4 + (hasPredictors(scan) ? scan.components.length : 0);

/** Block decoding procedures, one per kind of scan. */
enum Kind {
  Sequential,
  DcFirst,
  DcRefine,
  AcFirst,
  AcRefine,
}

/** A decoder standing at the start of `scan`'s entropy-coded data in `data`. */
export function createScanDecoder(data: Uint8Array, scan: JpegScan, mcusX: number, mcusY: number): ScanDecoder {
  return new Decoder(data, scan, mcusX, mcusY);
}

// One class for every kind of scan (a switch, not a closure per scan), so that the engine keeps
// one optimised version of each method however many scans and bands are decoded.
class Decoder implements ScanDecoder, EobState {
  readonly unitsX: number;
  readonly unitsY: number;
  readonly regions: (BlockRegion | undefined)[];
  readonly shadows: (Int32Array | undefined)[];
  readonly stateSize: number;
  private readonly r: BitReader;
  private readonly components: JpegComponent[];
  private readonly dcTables: HuffmanDecodeTable[];
  private readonly acTables: HuffmanDecodeTable[];
  private readonly kind: Kind;
  private readonly ss: number;
  private readonly se: number;
  private readonly al: number;
  private readonly total: number;
  private readonly ri: number;
  private readonly withPreds: boolean;
  private readonly preds: Int32Array;
  private readonly scratch = new Int16Array(64);
  /** End-of-band run left (G.1.2.2), shared with the block decoders. */
  eobrun = 0;
  private sinceRestart = 0;
  private nextRst = 0;

  constructor(data: Uint8Array, scan: JpegScan, mcusX: number, mcusY: number) {
    const n = scan.components.length;
    this.r = new BitReader(data, scan.start);
    this.components = scan.components;
    this.dcTables = scan.dcTables;
    this.acTables = scan.acTables;
    const { ss, ah } = scan;
    this.kind = !scan.progressive
      ? Kind.Sequential
      : ss === 0
        ? ah === 0
          ? Kind.DcFirst
          : Kind.DcRefine
        : ah === 0
          ? Kind.AcFirst
          : Kind.AcRefine;
    this.ss = ss;
    this.se = scan.se;
    this.al = scan.al;
    this.unitsX = n === 1 ? scan.components[0]!.dataBlocksWide : mcusX;
    this.unitsY = n === 1 ? scan.components[0]!.dataBlocksHigh : mcusY;
    this.total = this.unitsX * this.unitsY;
    this.ri = scan.restartInterval;
    this.withPreds = hasPredictors(scan);
    this.stateSize = scanStateSize(scan);
    this.preds = new Int32Array(n);
    this.regions = new Array<BlockRegion | undefined>(n).fill(undefined);
    this.shadows = new Array<Int32Array | undefined>(n).fill(undefined);
  }

  decodeUnits(row: number, c0: number, c1: number): void {
    const r = this.r;
    const comps = this.components;
    if (comps.length === 1) {
      // Non-interleaved: the MCU is a single block and only the data-carrying blocks are coded (A.2.2).
      for (let c = c0; c < c1; c++) {
        this.block(0, c, row);
        r.checkNotTruncated();
        this.maybeRestart(row * this.unitsX + c + 1);
      }
      return;
    }
    for (let mx = c0; mx < c1; mx++) {
      for (let ci = 0; ci < comps.length; ci++) {
        const comp = comps[ci]!;
        for (let y = 0; y < comp.v; y++) for (let x = 0; x < comp.h; x++) this.block(ci, mx * comp.h + x, row * comp.v + y);
      }
      r.checkNotTruncated();
      this.maybeRestart(row * this.unitsX + mx + 1);
    }
  }

  save(out: Int32Array, at: number): void {
    // Between units the reader holds at most 24 bits and has supplied no more fake bits than that.
    const r = this.r;
    out[at] = r.pos;
    out[at + 1] = r.buf | (r.cnt << 24);
    out[at + 2] = r.fake | (r.atMarker ? 256 : 0) | (this.nextRst << 9);
    out[at + 3] = this.eobrun | (this.sinceRestart << 16);
    if (this.withPreds) for (let i = 0; i < this.preds.length; i++) out[at + 4 + i] = this.preds[i]!;
  }

  restore(src: Int32Array, at: number): void {
    const r = this.r;
    r.pos = src[at]!;
    r.buf = src[at + 1]! & 0xffffff;
    r.cnt = src[at + 1]! >>> 24;
    r.fake = src[at + 2]! & 255;
    r.atMarker = (src[at + 2]! & 256) !== 0;
    this.nextRst = (src[at + 2]! >>> 9) & 7;
    this.eobrun = src[at + 3]! & 0xffff;
    this.sinceRestart = src[at + 3]! >>> 16;
    if (this.withPreds) for (let i = 0; i < this.preds.length; i++) this.preds[i] = src[at + 4 + i]!;
  }

  private block(ci: number, bx: number, by: number): void {
    const g = this.regions[ci];
    if (g !== undefined) {
      const x = bx - g.x0;
      const y = by - g.y0;
      if (x >= 0 && y >= 0 && x < g.w && y < g.h) return this.decodeBlock(g.coeffs, (y * g.w + x) * 64, ci);
    }
    const shadow = this.shadows[ci];
    if (shadow === undefined || this.ss === 0) return this.decodeBlock(this.scratch, 0, ci);
    // A dropped block of an AC scan: only which coefficients are non-zero is kept.
    const at = (by * this.components[ci]!.blocksWide + bx) * 2;
    const table = this.acTables[ci]!;
    if (this.kind === Kind.AcFirst) decodeAcFirst(this.r, this, undefined, 0, shadow, at, table, this.ss, this.se, this.al);
    else skipAcRefine(this.r, this, shadow, at, table, this.ss, this.se);
  }

  private decodeBlock(c: Int16Array, o: number, ci: number): void {
    const r = this.r;
    switch (this.kind) {
      case Kind.Sequential:
        return decodeSequential(r, c, o, this.dcTables[ci]!, this.acTables[ci]!, this.preds, ci);
      case Kind.DcFirst:
        return decodeDcFirst(r, c, o, this.dcTables[ci]!, this.preds, ci, this.al);
      case Kind.DcRefine:
        if (r.receive(1)) c[o] = c[o]! | (1 << this.al);
        return;
      case Kind.AcFirst:
        return decodeAcFirst(r, this, c, o, undefined, 0, this.acTables[ci]!, this.ss, this.se, this.al);
      default:
        return decodeAcRefine(r, this, c, o, this.acTables[ci]!, this.ss, this.se, this.al);
    }
  }

  private maybeRestart(done: number): void {
    if (this.ri === 0 || done === this.total) return;
    if (++this.sinceRestart < this.ri) return;
    this.r.restart(this.nextRst);
    this.nextRst = (this.nextRst + 1) & 7;
    this.sinceRestart = 0;
    this.preds.fill(0);
    this.eobrun = 0;
  }
}
