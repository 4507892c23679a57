/**
 * JPEG to RGB pixels at 1/1, 1/2, 1/4 or 1/8 of the size, for thumbnails: each 8x8 block goes
 * through a reduced inverse DCT (8x8, 4x4, 2x2 or its DC alone), so a 24-megapixel photo never
 * exists at full size. The picture is decoded a band of MCU rows at a time: a baseline file is read
 * straight through; a progressive one is indexed first (jpeg-band-decode) and its scans that only
 * carry frequencies the scale drops are skipped. Chroma is upsampled by repeating samples.
 */
import { ImageStructureError } from "./exif";
import { bandCuts, createBandDecoder } from "./jpeg-band-decode";
import { idctScaled, ycbcrToRgb } from "./jpeg-idct-scaled";
import { type JpegLayout, parseJpeg, ZIGZAG } from "./jpeg-parse";
import type { Raster } from "./raster";

export type JpegScale = 1 | 2 | 4 | 8;

/** Coefficient bytes decoded at once (a band of MCU rows, at least one row). */
const BAND_BYTES = 4 << 20;

/** The largest scale whose scaled width, ceil(width / scale), is still at least `targetWidth`; 1 if none is. */
export function jpegScaleFor(width: number, targetWidth: number): JpegScale {
  for (const scale of [8, 4, 2] as const) if (Math.ceil(width / scale) >= targetWidth) return scale;
  return 1;
}

/** Whether a three-component frame holds RGB rather than YCbCr (the JFIF / Adobe APP14 conventions). */
function isRgb(layout: JpegLayout): boolean {
  const isApp = (s: Uint8Array, marker: number, name: string): boolean =>
    s[1] === marker && s.length >= 4 + name.length && String.fromCharCode(...s.subarray(4, 4 + name.length)) === name;
  if (layout.segments.some((s) => isApp(s, 0xe0, "JFIF\0"))) return false;
  const adobe = layout.segments.find((s) => isApp(s, 0xee, "Adobe") && s.length >= 16);
  if (adobe) return adobe[15] === 0; // transform 0: no colour transform, so RGB
  const ids = layout.components.map((c) => c.id);
  return ids[0] === 0x52 && ids[1] === 0x47 && ids[2] === 0x42; // "R", "G", "B"
}

/**
 * Per scan, whether the scale needs it: DC scans always; an AC scan when its band holds one of the
 * n x n kept frequencies, or overlaps a later refinement scan that is decoded (a refinement reads
 * a bit for every coefficient its band already made non-zero).
 */
function scansToKeep(layout: JpegLayout, n: number): boolean[] {
  const keep = layout.scans.map(() => true);
  if (n === 8) return keep;
  const wanted = (k: number): boolean => ZIGZAG[k]! >> 3 < n && (ZIGZAG[k]! & 7) < n;
  const refinements: [number, number][][] = layout.components.map(() => []);
  for (let i = layout.scans.length - 1; i >= 0; i--) {
    const s = layout.scans[i]!;
    if (s.ss === 0) continue;
    const later = refinements[s.components[0]!.index]!;
    let needed = later.some(([a, b]) => a <= s.se && s.ss <= b);
    for (let k = s.ss; k <= s.se && !needed; k++) needed = wanted(k);
    keep[i] = needed;
    if (needed && s.ah > 0) later.push([s.ss, s.se]);
  }
  return keep;
}

/**
 * RGB pixels (3 channels) of the JPEG at 1/`scale`: ceil(width / scale) x ceil(height / scale).
 * Greyscale comes out as equal R, G and B. Throws `ImageStructureError` for what it cannot decode:
 * arithmetic coding, lossless or hierarchical JPEG, 12-bit samples, CMYK / YCCK or other component
 * counts than 1 and 3, broken data (at 1/8 the AC scans of a progressive file are not read at all,
 * unless `everyScan`).
 */
export function decodeJpegScaled(bytes: Uint8Array, scale: JpegScale, options: DecodeOptions = {}): Raster {
  return decodeJpegScaledInBands(bytes, scale, BAND_BYTES, options);
}

/** How much of the file a scaled decode reads. */
export interface DecodeOptions {
  /**
   * Entropy-decode every scan, even those a reduced scale does not need (the AC scans of a
   * progressive file at 1/8), so that corrupt data anywhere in the file throws: the check that an
   * upload decodes at all. The pixels are the same.
   */
  everyScan?: boolean;
}

/** `decodeJpegScaled` decoding about `bandBytes` of coefficients at once (at least one MCU row); the pixels do not depend on it. */
export function decodeJpegScaledInBands(bytes: Uint8Array, scale: JpegScale, bandBytes: number, options: DecodeOptions = {}): Raster {
  if (scale !== 1 && scale !== 2 && scale !== 4 && scale !== 8) throw new RangeError(`unsupported JPEG scale ${String(scale)}`);
  const layout = parseJpeg(bytes);
  const comps = layout.components;
  if (comps.length !== 1 && comps.length !== 3) {
    throw new ImageStructureError(`JPEG: ${comps.length}-component images (CMYK, YCCK) cannot be decoded`);
  }
  const gray = comps.length === 1;
  const rgb = !gray && isRgb(layout);
  const n = 8 / scale;
  const width = Math.ceil(layout.width / scale);
  const height = Math.ceil(layout.height / scale);
  const { hmax, vmax } = layout;

  let mcuRowBytes = 0;
  for (const c of comps) mcuRowBytes += c.blocksWide * c.v * 128;
  const rowsPerBand = Math.max(1, Math.floor(bandBytes / mcuRowBytes));
  const cuts = bandCuts(layout.mcusY, Math.ceil(layout.mcusY / rowsPerBand));
  const keep = options.everyScan ? layout.scans.map(() => true) : scansToKeep(layout, n);
  const decoder = createBandDecoder(bytes, layout, "y", cuts, { keep, inOrder: true });

  let bandRows = 0;
  for (let b = 0; b < decoder.bands; b++) bandRows = Math.max(bandRows, cuts[b + 1]! - cuts[b]!);
  // Samples of a band per component at the reduced size, and for each output column its sample.
  const planes = comps.map((c) => {
    const stride = c.blocksWide * n;
    return { stride, data: new Uint8ClampedArray(stride * bandRows * c.v * n) };
  });
  const columns = comps.map((c) => Int32Array.from({ length: width }, (_, x) => Math.floor((x * c.h) / hmax)));
  const pixels = new Uint8Array(width * height * 3);
  const out = new Uint8ClampedArray(pixels.buffer);
  const tmp = new Float64Array(64);

  for (let b = 0; b < decoder.bands; b++) {
    const regions = decoder.decodeBand(b);
    comps.forEach((c, ci) => {
      const g = regions[c.index]!;
      const q = layout.quantTables[c.tq]!;
      const { stride, data } = planes[ci]!;
      for (let by = 0; by < g.h; by++) {
        for (let bx = 0; bx < g.w; bx++) idctScaled(g.coeffs, (by * g.w + bx) * 64, q, n, data, by * n * stride + bx * n, stride, tmp);
      }
    });
    const y0 = cuts[b]! * vmax * n;
    const y1 = Math.min(cuts[b + 1]! * vmax * n, height);
    const rowOf = (ci: number, y: number): number =>
      (Math.floor((y * comps[ci]!.v) / vmax) - cuts[b]! * comps[ci]!.v * n) * planes[ci]!.stride;
    for (let y = y0; y < y1; y++) {
      let o = y * width * 3;
      const p0 = planes[0]!.data;
      const r0 = rowOf(0, y);
      const x0 = columns[0]!;
      if (gray) {
        for (let x = 0; x < width; x++, o += 3) out[o] = out[o + 1] = out[o + 2] = p0[r0 + x0[x]!]!;
        continue;
      }
      const p1 = planes[1]!.data;
      const p2 = planes[2]!.data;
      const r1 = rowOf(1, y);
      const r2 = rowOf(2, y);
      const x1 = columns[1]!;
      const x2 = columns[2]!;
      for (let x = 0; x < width; x++, o += 3) {
        const s0 = p0[r0 + x0[x]!]!;
        const s1 = p1[r1 + x1[x]!]!;
        const s2 = p2[r2 + x2[x]!]!;
        if (rgb) {
          out[o] = s0;
          out[o + 1] = s1;
          out[o + 2] = s2;
        } else ycbcrToRgb(out, o, s0, s1, s2);
      }
    }
  }
  return { width, height, channels: 3, pixels };
}
