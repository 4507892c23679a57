/**
 * Decoding a JPEG's coefficients one band at a time, so memory follows the band, not the picture.
 * A band is a range of MCU columns (axis "x") or MCU rows (axis "y") of the source. A first pass
 * decodes every scan once and notes the decoder state where each band starts in each unit row
 * (axis x) or where each band starts (axis y); a band is then decoded by resuming there, so all
 * bands together cost about one more decode. That first pass drops every block, keeping for
 * progressive refinement only which coefficients are non-zero (8 bytes per block). With a single
 * scan read in band order no first pass is needed: the decoder simply carries on.
 */
import { ImageStructureError } from "./exif";
import type { JpegComponent, JpegLayout, JpegScan } from "./jpeg-parse";
import { type BlockRegion, createScanDecoder, type ScanDecoder, scanStateSize } from "./jpeg-scan-decode";

/** Most memory the saved decoder states may take; past it a file has too many scans for the bound. */
const MAX_INDEX_BYTES = 16 << 20;

export type BandAxis = "x" | "y";

export interface BandDecoderOptions {
  /** Per scan of the layout, whether to decode it (all by default); a dropped scan leaves its coefficients zero. */
  keep?: readonly boolean[];
  /** Bands will be asked for once each, in order (axis y only): one kept scan is then read straight through. */
  inOrder?: boolean;
}

/** Yields the coefficients of one band after another. */
export interface BandDecoder {
  readonly bands: number;
  /**
   * Coefficients of band `b` for every frame component (by frame index): the component's blocks in
   * the band's MCUs, across the whole other axis. Valid until the next call, which reuses the memory.
   */
  decodeBand(b: number): BlockRegion[];
}

/** `bands` near-equal cuts of `units`: [0, ..., units]. */
export function bandCuts(units: number, bands: number): number[] {
  const n = Math.max(1, Math.min(bands, units));
  return Array.from({ length: n + 1 }, (_, i) => Math.round((i * units) / n));
}

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};

/** Prepares band decoding of `layout` (parsed from `bytes`) at source MCU `cuts` along `axis`; runs the indexing pass when needed. */
export function createBandDecoder(
  bytes: Uint8Array,
  layout: JpegLayout,
  axis: BandAxis,
  cuts: number[],
  options: BandDecoderOptions = {},
): BandDecoder {
  const bands = cuts.length - 1;
  const scans = layout.scans.filter((_, i) => options.keep?.[i] ?? true);
  const along = (c: JpegComponent): number => (axis === "x" ? c.h : c.v);
  const alongBlocks = (c: JpegComponent): number => (axis === "x" ? c.blocksWide : c.blocksHigh);
  const acrossBlocks = (c: JpegComponent): number => (axis === "x" ? c.blocksHigh : c.blocksWide);
  const bandBlocks = (c: JpegComponent, b: number): [number, number] => [
    Math.min(cuts[b]! * along(c), alongBlocks(c)),
    Math.min(cuts[b + 1]! * along(c), alongBlocks(c)),
  ];

  // One allocation serves the band regions and, before them, the non-zero maps of the first pass.
  const regionOffsets: number[] = [];
  let regionsLength = 0;
  for (const c of layout.components) {
    let most = 0;
    for (let b = 0; b < bands; b++) {
      const [a0, a1] = bandBlocks(c, b);
      most = Math.max(most, a1 - a0);
    }
    regionOffsets.push(regionsLength);
    regionsLength += most * acrossBlocks(c) * 64;
  }
  const streaming = bands > 1 && options.inOrder === true && axis === "y" && scans.length === 1;
  const refined = new Set<number>();
  for (const s of scans) if (s.ss > 0 && s.ah > 0) refined.add(s.components[0]!.index);
  let shadowWords = 0;
  if (!streaming && bands > 1) for (const c of layout.components) if (refined.has(c.index)) shadowWords += c.blocksWide * c.blocksHigh * 2;
  const arena = new ArrayBuffer(Math.max(regionsLength * 2, shadowWords * 4));

  /** Unit index in `scan` where cut `i` falls. */
  const unitCut = (scan: JpegScan, i: number): number => {
    if (scan.components.length > 1) return cuts[i]!;
    const c = scan.components[0]!;
    return Math.min(cuts[i]! * along(c), axis === "x" ? c.dataBlocksWide : c.dataBlocksHigh);
  };
  const unitsAcross = (scan: JpegScan): number => {
    const c = scan.components[0]!;
    if (scan.components.length > 1) return axis === "x" ? layout.mcusY : layout.mcusX;
    return axis === "x" ? c.dataBlocksHigh : c.dataBlocksWide;
  };

  // Indexing pass: decode everything once, note where each band starts.
  let index = new Int32Array(0);
  const indexAt: number[] = [];
  if (!streaming && bands > 1) {
    let size = 0;
    for (const s of scans) {
      indexAt.push(size);
      size += scanStateSize(s) * (axis === "x" ? unitsAcross(s) * bands : bands);
    }
    if (size * 4 > MAX_INDEX_BYTES) fail(`${scans.length} scans are too many to decode in bounded memory`);
    index = new Int32Array(size);
    let shadowAt = 0;
    const shadowOf = new Map<number, Int32Array>();
    for (const c of layout.components) {
      if (!refined.has(c.index)) continue;
      const words = c.blocksWide * c.blocksHigh * 2;
      shadowOf.set(c.index, new Int32Array(arena, shadowAt * 4, words));
      shadowAt += words;
    }
    scans.forEach((s, si) => {
      const d = createScanDecoder(bytes, s, layout.mcusX, layout.mcusY);
      s.components.forEach((c, i) => (d.shadows[i] = shadowOf.get(c.index)));
      const stride = d.stateSize;
      if (axis === "x") {
        for (let row = 0, at = indexAt[si]!; row < d.unitsY; row++) {
          for (let b = 0; b < bands; b++, at += stride) {
            d.save(index, at);
            d.decodeUnits(row, unitCut(s, b), unitCut(s, b + 1));
          }
        }
      } else {
        for (let b = 0; b < bands; b++) {
          d.save(index, indexAt[si]! + b * stride);
          for (let row = unitCut(s, b); row < unitCut(s, b + 1); row++) d.decodeUnits(row, 0, d.unitsX);
        }
      }
    });
  }

  let stream: ScanDecoder | undefined;
  let nextBand = 0;
  return {
    bands,
    decodeBand(b) {
      const regions = layout.components.map((c): BlockRegion => {
        const [a0, a1] = bandBlocks(c, b);
        const across = acrossBlocks(c);
        const coeffs = new Int16Array(arena, regionOffsets[c.index]! * 2, (a1 - a0) * across * 64);
        coeffs.fill(0);
        return axis === "x" ? { coeffs, x0: a0, y0: 0, w: a1 - a0, h: across } : { coeffs, x0: 0, y0: a0, w: across, h: a1 - a0 };
      });
      scans.forEach((s, si) => {
        let d: ScanDecoder;
        if (streaming) {
          if (b !== nextBand++) throw new Error("bands must be decoded in order");
          d = stream ??= createScanDecoder(bytes, s, layout.mcusX, layout.mcusY);
        } else d = createScanDecoder(bytes, s, layout.mcusX, layout.mcusY); // at the scan's start
        s.components.forEach((c, i) => (d.regions[i] = regions[c.index]));
        const u0 = unitCut(s, b);
        const u1 = unitCut(s, b + 1);
        if (streaming || bands === 1) {
          if (axis === "x") for (let row = 0; row < d.unitsY; row++) d.decodeUnits(row, u0, u1);
          else for (let row = u0; row < u1; row++) d.decodeUnits(row, 0, d.unitsX);
        } else if (axis === "x") {
          if (u0 === u1) return;
          const stride = d.stateSize;
          for (let row = 0, at = indexAt[si]! + b * stride; row < d.unitsY; row++, at += bands * stride) {
            d.restore(index, at);
            d.decodeUnits(row, u0, u1);
          }
        } else {
          d.restore(index, indexAt[si]! + b * d.stateSize);
          for (let row = u0; row < u1; row++) d.decodeUnits(row, 0, d.unitsX);
        }
      });
      return regions;
    },
  };
}
