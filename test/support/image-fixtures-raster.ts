/**
 * Builders of PNGs (every colour type, bit depth and filter, plain or Adam7) and BMPs (palette,
 * 16/24/32-bit, bit fields, both row orders) from sample functions, for the pixel decoders, plus
 * small raster helpers for checking their output.
 */
import type { Raster } from "../../src/lib/images/raster";
import { concat, deflate, pngChunk } from "./image-fixtures";

export type PngColorType = 0 | 2 | 3 | 4 | 6;

export interface PngSpec {
  width: number;
  height: number;
  colorType: PngColorType;
  depth: 1 | 2 | 4 | 8 | 16;
  /** Raw samples of pixel (x, y) at `depth` (a palette image: the index). */
  sample: (x: number, y: number) => number[];
  palette?: [number, number, number][];
  trns?: number[];
  /** Filter type of scanline `row` of Adam7 pass `pass` (0 when not interlaced); default cycles 0-4. */
  filter?: (row: number, pass: number) => number;
  interlaced?: boolean;
  /** Number of IDAT chunks the compressed data is split into. */
  idatChunks?: number;
  /** Replaces the zlib stream, for broken-data tests. */
  mangle?: (zlib: Uint8Array) => Uint8Array;
}

const SAMPLES: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Filters one packed scanline against the previous one (null at the top of a pass). */
function filterLine(type: number, raw: Uint8Array, prev: Uint8Array | null, bpp: number): Uint8Array {
  const out = new Uint8Array(raw.length + 1);
  out[0] = type;
  for (let i = 0; i < raw.length; i++) {
    const a = i >= bpp ? raw[i - bpp]! : 0;
    const b = prev ? prev[i]! : 0;
    const c = prev && i >= bpp ? prev[i - bpp]! : 0;
    const predictor = type === 0 ? 0 : type === 1 ? a : type === 2 ? b : type === 3 ? (a + b) >> 1 : paeth(a, b, c);
    out[i + 1] = (raw[i]! - predictor) & 0xff;
  }
  return out;
}

/** Packs samples MSB first at the bit depth (16-bit big-endian). */
function packLine(samples: number[], depth: number): Uint8Array {
  const out = new Uint8Array(Math.ceil((samples.length * depth) / 8));
  samples.forEach((v, k) => {
    if (depth === 16) {
      out[2 * k] = v >> 8;
      out[2 * k + 1] = v & 0xff;
    } else {
      const bit = k * depth;
      out[bit >> 3]! |= v << (8 - depth - (bit & 7));
    }
  });
  return out;
}

/** The raw (filtered, uncompressed) image data of the spec. */
export function pngScanlines(spec: PngSpec): Uint8Array {
  const { width, height, depth, colorType } = spec;
  const bpp = Math.max(1, (SAMPLES[colorType] * depth) >> 3);
  const passes = spec.interlaced ? ADAM7 : [[0, 0, 1, 1]];
  const lines: Uint8Array[] = [];
  passes.forEach(([x0, y0, dx, dy], pass) => {
    let prev: Uint8Array | null = null;
    let row = 0;
    for (let y = y0!; y < height; y += dy!, row++) {
      const samples: number[] = [];
      for (let x = x0!; x < width; x += dx!) samples.push(...spec.sample(x, y));
      if (samples.length === 0) break; // an empty pass has no scanlines at all
      const raw = packLine(samples, depth);
      const type = spec.filter ? spec.filter(row, spec.interlaced ? pass + 1 : 0) : (row + pass) % 5;
      lines.push(filterLine(type, raw, prev, bpp));
      prev = raw;
    }
  });
  return concat(...lines);
}

/** A PNG file built from the spec. */
export async function buildPng(spec: PngSpec): Promise<Uint8Array> {
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, spec.width);
  dv.setUint32(4, spec.height);
  ihdr.set([spec.depth, spec.colorType, 0, 0, spec.interlaced ? 1 : 0], 8);
  let zlib = await deflate(pngScanlines(spec));
  if (spec.mangle) zlib = spec.mangle(zlib);
  const parts = spec.idatChunks ?? 3;
  const step = Math.ceil(zlib.length / parts);
  const idats: Uint8Array[] = [];
  for (let o = 0; o < zlib.length; o += step) idats.push(pngChunk("IDAT", zlib.subarray(o, o + step)));
  return concat(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    pngChunk("IHDR", ihdr),
    ...(spec.palette ? [pngChunk("PLTE", spec.palette.flat())] : []),
    ...(spec.trns ? [pngChunk("tRNS", spec.trns)] : []),
    ...idats,
    pngChunk("IEND", []),
  );
}

export interface BmpSpec {
  width: number;
  height: number;
  bitCount: 1 | 4 | 8 | 16 | 24 | 32;
  /** Raw value of pixel (x, y): palette index, packed 16/32-bit value, or 0xRRGGBB for 24 bits. */
  value: (x: number, y: number) => number;
  palette?: [number, number, number][];
  topDown?: boolean;
  /** Info header size: 12 (OS/2 core), 40, 56, 108 or 124. */
  headerSize?: 12 | 40 | 56 | 108 | 124;
  compression?: number;
  /** r, g, b, a masks for BI_BITFIELDS (3). */
  masks?: [number, number, number, number];
}

/** A BMP file built from the spec; rows bottom-up unless `topDown`. */
export function buildBmp(spec: BmpSpec): Uint8Array {
  const { width, height, bitCount } = spec;
  const headerSize = spec.headerSize ?? 40;
  const core = headerSize === 12;
  const compression = spec.compression ?? 0;
  const maskBytes = compression === 3 && headerSize === 40 ? 12 : 0;
  const palette = spec.palette ?? [];
  const paletteBytes = palette.length * (core ? 3 : 4);
  const pixelOffset = 14 + headerSize + maskBytes + paletteBytes;
  const stride = Math.floor((bitCount * width + 31) / 32) * 4;
  const size = pixelOffset + stride * height;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set([0x42, 0x4d]);
  dv.setUint32(2, size, true);
  dv.setUint32(10, pixelOffset, true);
  dv.setUint32(14, headerSize, true);
  if (core) {
    dv.setUint16(18, width, true);
    dv.setUint16(20, height, true);
    dv.setUint16(22, 1, true);
    dv.setUint16(24, bitCount, true);
  } else {
    dv.setInt32(18, width, true);
    dv.setInt32(22, spec.topDown ? -height : height, true);
    dv.setUint16(26, 1, true);
    dv.setUint16(28, bitCount, true);
    dv.setUint32(30, compression, true);
    dv.setUint32(34, stride * height, true);
    dv.setUint32(46, palette.length, true);
    if (spec.masks) spec.masks.forEach((m, i) => (i < 3 || headerSize >= 56) && dv.setUint32(54 + 4 * i, m >>> 0, true));
  }
  palette.forEach(([r, g, b], i) => out.set(core ? [b, g, r] : [b, g, r, 0], 14 + headerSize + maskBytes + i * (core ? 3 : 4)));
  for (let y = 0; y < height; y++) {
    const row = pixelOffset + (spec.topDown ? y : height - 1 - y) * stride;
    for (let x = 0; x < width; x++) {
      const v = spec.value(x, y);
      if (bitCount <= 8) out[row + ((x * bitCount) >> 3)]! |= v << (8 - bitCount - ((x * bitCount) & 7));
      else if (bitCount === 16) dv.setUint16(row + 2 * x, v, true);
      else if (bitCount === 24) out.set([v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff], row + 3 * x);
      else dv.setUint32(row + 4 * x, v >>> 0, true);
    }
  }
  return out;
}

/** The pixel (x, y) of a raster as an array of its channels. */
export function pixelAt(r: Raster, x: number, y: number): number[] {
  const o = (y * r.width + x) * r.channels;
  return Array.from(r.pixels.subarray(o, o + r.channels));
}

/** A raster filled from a function returning channel arrays. */
export function makeRaster(width: number, height: number, channels: 3 | 4, pixel: (x: number, y: number) => number[]): Raster {
  const pixels = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) pixels.set(pixel(x, y), (y * width + x) * channels);
  return { width, height, channels, pixels };
}

/**
 * Reference box downscale, written plainly: destination pixel (X, Y) averages the source pixels
 * with floor(x * W / w) = X and floor(y * H / h) = Y; with alpha, colours are weighted by alpha.
 */
export function referenceDownscale(src: Raster, width: number, height: number): Raster {
  return makeRaster(width, height, src.channels, (X, Y) => {
    const sums = [0, 0, 0, 0];
    let n = 0;
    for (let y = 0; y < src.height; y++) {
      if (Math.floor((y * height) / src.height) !== Y) continue;
      for (let x = 0; x < src.width; x++) {
        if (Math.floor((x * width) / src.width) !== X) continue;
        const p = pixelAt(src, x, y);
        const a = src.channels === 4 ? p[3]! : 1;
        for (let c = 0; c < 3; c++) sums[c]! += p[c]! * a;
        sums[3]! += a;
        n++;
      }
    }
    const colour = [0, 1, 2].map((c) => (sums[3]! > 0 ? Math.round(sums[c]! / sums[3]!) : 0));
    return src.channels === 4 ? [...colour, Math.round(sums[3]! / n)] : colour;
  });
}
