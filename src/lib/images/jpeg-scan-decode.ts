/**
 * Huffman entropy decoding of one JPEG scan into quantised coefficients: sequential (T.81 F.2.2)
 * and progressive with spectral selection and successive approximation (G.2), restart intervals
 * included. A decoder walks the scan's units (MCUs, or blocks of a non-interleaved scan) row by
 * row and can stop, note its state and resume there, so callers may decode a scan piece by piece
 * and keep only the blocks of a region.
 */
import { ImageStructureError } from "./exif";
import { BitReader, type HuffmanDecodeTable } from "./jpeg-bit-reader";
import { ZIGZAG, type JpegScan } from "./jpeg-parse";

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

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};

/** Whether a scan carries DC values coded as differences, whose predictors are part of the state. */
const hasPredictors = (scan: JpegScan): boolean => scan.ss === 0 && scan.ah === 0;

/** Int32 values of a decoder's saved state for `scan`. */
export const scanStateSize = (scan: JpegScan): number => 4 + (hasPredictors(scan) ? scan.components.length : 0);

/** A decoder standing at the start of `scan`'s entropy-coded data in `data`. */
export function createScanDecoder(data: Uint8Array, scan: JpegScan, mcusX: number, mcusY: number): ScanDecoder {
  const r = new BitReader(data, scan.start);
  const { components, ss, se, ah, al } = scan;
  const n = components.length;
  const preds = new Int32Array(n);
  const scratch = new Int16Array(64);
  const regions: (BlockRegion | undefined)[] = new Array<BlockRegion | undefined>(n).fill(undefined);
  const shadows: (Int32Array | undefined)[] = new Array<Int32Array | undefined>(n).fill(undefined);
  let eobrun = 0;
  let sinceRestart = 0;
  let nextRst = 0;
  const unitsX = n === 1 ? components[0]!.dataBlocksWide : mcusX;
  const unitsY = n === 1 ? components[0]!.dataBlocksHigh : mcusY;
  const total = unitsX * unitsY;
  const ri = scan.restartInterval;
  const dcTables: HuffmanDecodeTable[] = scan.dcTables;
  const acTables: HuffmanDecodeTable[] = scan.acTables;

  let decodeBlock: (c: Int16Array, o: number, ci: number) => void;
  if (!scan.progressive) {
    decodeBlock = (c, o, ci) => {
      const t = r.decode(dcTables[ci]!);
      if (t > 11) fail("bad DC magnitude category");
      c[o] = preds[ci] = preds[ci]! + r.signed(t);
      const ac = acTables[ci]!;
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
      const t = r.decode(dcTables[ci]!);
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
      const ac = acTables[ci]!;
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
    decodeBlock = (c, o, ci) => refineAc(c, o, acTables[ci]!);
  }

  // G.1.2.3: refinement of AC coefficients, correcting bits of already non-zero ones on the way.
  function refineAc(c: Int16Array, o: number, table: HuffmanDecodeTable): void {
    const p1 = 1 << al;
    const m1 = -1 << al;
    let k = ss;
    if (eobrun === 0) {
      for (; k <= se; k++) {
        const rs = r.decode(table);
        let run = rs >> 4;
        const s = rs & 15;
        let value = 0;
        if (s) {
          if (s !== 1) fail("bad refinement magnitude");
          value = r.receive(1) ? p1 : m1;
        } else if (run !== 15) {
          eobrun = (1 << run) + r.receive(run);
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
    if (eobrun > 0) {
      for (; k <= se; k++) {
        const z = o + ZIGZAG[k]!;
        const cur = c[z]!;
        if (cur !== 0 && r.receive(1) && (cur & p1) === 0) c[z] = cur >= 0 ? cur + p1 : cur + m1;
      }
      eobrun--;
    }
  }

  /** A dropped block of an AC scan: its non-zero pattern goes through `scratch` and back. */
  function decodeShadowed(shadow: Int32Array, at: number, ci: number): void {
    for (let k = ss; k <= se; k++) scratch[ZIGZAG[k]!] = (shadow[at + (k >> 5)]! >>> (k & 31)) & 1;
    decodeBlock(scratch, 0, ci);
    for (let k = ss; k <= se; k++) if (scratch[ZIGZAG[k]!] !== 0) shadow[at + (k >> 5)]! |= 1 << (k & 31);
  }

  function block(ci: number, bx: number, by: number): void {
    const g = regions[ci];
    if (g !== undefined) {
      const x = bx - g.x0;
      const y = by - g.y0;
      if (x >= 0 && y >= 0 && x < g.w && y < g.h) return decodeBlock(g.coeffs, (y * g.w + x) * 64, ci);
    }
    const shadow = shadows[ci];
    if (shadow === undefined || ss === 0) decodeBlock(scratch, 0, ci);
    else decodeShadowed(shadow, (by * components[ci]!.blocksWide + bx) * 2, ci);
  }

  function maybeRestart(done: number): void {
    if (ri === 0 || done === total) return;
    if (++sinceRestart < ri) return;
    r.restart(nextRst);
    nextRst = (nextRst + 1) & 7;
    sinceRestart = 0;
    preds.fill(0);
    eobrun = 0;
  }

  const withPreds = hasPredictors(scan);
  return {
    unitsX,
    unitsY,
    regions,
    shadows,
    stateSize: scanStateSize(scan),
    decodeUnits(row, c0, c1) {
      if (n === 1) {
        // Non-interleaved: the MCU is a single block and only the data-carrying blocks are coded (A.2.2).
        for (let c = c0; c < c1; c++) {
          block(0, c, row);
          r.checkNotTruncated();
          maybeRestart(row * unitsX + c + 1);
        }
        return;
      }
      for (let mx = c0; mx < c1; mx++) {
        for (let ci = 0; ci < n; ci++) {
          const comp = components[ci]!;
          for (let y = 0; y < comp.v; y++) for (let x = 0; x < comp.h; x++) block(ci, mx * comp.h + x, row * comp.v + y);
        }
        r.checkNotTruncated();
        maybeRestart(row * unitsX + mx + 1);
      }
    },
    save(out, at) {
      // Between units the reader holds at most 24 bits and has supplied no more fake bits than that.
      out[at] = r.pos;
      out[at + 1] = r.buf | (r.cnt << 24);
      out[at + 2] = r.fake | (r.atMarker ? 256 : 0) | (nextRst << 9);
      out[at + 3] = eobrun | (sinceRestart << 16);
      if (withPreds) for (let i = 0; i < n; i++) out[at + 4 + i] = preds[i]!;
    },
    restore(src, at) {
      r.pos = src[at]!;
      r.buf = src[at + 1]! & 0xffffff;
      r.cnt = src[at + 1]! >>> 24;
      r.fake = src[at + 2]! & 255;
      r.atMarker = (src[at + 2]! & 256) !== 0;
      nextRst = (src[at + 2]! >>> 9) & 7;
      eobrun = src[at + 3]! & 0xffff;
      sinceRestart = src[at + 3]! >>> 16;
      if (withPreds) for (let i = 0; i < n; i++) preds[i] = src[at + 4 + i]!;
    },
  };
}
