/**
 * Area-averaging downscaling and EXIF re-orientation of rasters. The accumulator is shared with
 * the streaming decoders, which feed it rows as they decode them, so that a large source never
 * exists as a whole raster.
 */
import type { Orientation } from "./jpeg-orient";
import type { Raster } from "./raster";

export type { Orientation };

/** Destination size under a width limit: never upscales; the height keeps the aspect ratio, at least 1. */
export function scaledSize(width: number, height: number, maxWidth: number): { width: number; height: number } {
  if (!Number.isInteger(maxWidth) || maxWidth < 1) throw new RangeError(`maxWidth must be a positive integer, got ${maxWidth}`);
  if (width <= maxWidth) return { width, height };
  return { width: maxWidth, height: Math.max(1, Math.round((height * maxWidth) / width)) };
}

/** floor(a / b) for non-negative integers, corrected where the float quotient rounds across an integer. */
function floorDiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  while (q * b > a) q--;
  while ((q + 1) * b <= a) q++;
  return q;
}

/**
 * Box-filter downscaler: source pixel (x, y) belongs to destination pixel
 * (floor(x * dw / sw), floor(y * dh / sh)), and each destination pixel is the mean of the source
 * pixels that belong to it. With alpha the mean is weighted by alpha (premultiplied), so the
 * colour of fully transparent pixels does not bleed into their neighbours.
 *
 * In "rows" mode source rows must arrive in order (any number of segments per row) and only one
 * destination row of sums is kept; "any" mode (Adam7 passes) keeps sums for the whole
 * destination. When the sizes are equal, pixels are written straight into the output.
 */
export class AreaAccumulator {
  private readonly out: Raster;
  private readonly colSpan: Uint32Array;
  private readonly sums: Float64Array | Float32Array | null;
  private band = -1;

  constructor(
    private readonly srcWidth: number,
    private readonly srcHeight: number,
    width: number,
    height: number,
    private readonly channels: 3 | 4,
    private readonly mode: "rows" | "any",
  ) {
    if (width > srcWidth || height > srcHeight || width < 1 || height < 1) throw new RangeError("AreaAccumulator only shrinks");
    this.out = { width, height, channels, pixels: new Uint8Array(width * height * channels) };
    this.colSpan = new Uint32Array(width);
    const colStart = (dx: number) => floorDiv(dx * srcWidth + width - 1, width);
    for (let dx = 0; dx < width; dx++) this.colSpan[dx] = colStart(dx + 1) - colStart(dx);
    const identity = width === srcWidth && height === srcHeight;
    // Whole-destination sums in Float32 are exact while a box holds at most 258 pixels
    // (255 * 255 * 258 < 2^24); a larger box means a destination over 258 times smaller than
    // the source, where Float64 costs little.
    const box = Math.ceil(srcWidth / width) * Math.ceil(srcHeight / height);
    const Sums = mode === "rows" || box * 255 * 255 >= 2 ** 24 ? Float64Array : Float32Array;
    this.sums = identity ? null : new Sums(mode === "rows" ? width * channels : width * height * channels);
  }

  private rowOf(y: number): number {
    return floorDiv(y * this.out.height, this.srcHeight);
  }

  /** Number of source rows that belong to destination row `dy`. */
  private rowSpan(dy: number): number {
    const h = this.out.height;
    const start = (d: number) => floorDiv(d * this.srcHeight + h - 1, h);
    return start(dy + 1) - start(dy);
  }

  /**
   * Adds `count` pixels of source row `y`, packed `channels` bytes each in `px`: pixel i lies at
   * x = x0 + i * step (step > 1 for interlace passes).
   */
  add(y: number, px: Uint8Array, count: number, x0 = 0, step = 1): void {
    const ch = this.channels;
    const sums = this.sums;
    if (sums === null) {
      const o = (y * this.out.width + x0) * ch;
      if (step === 1) this.out.pixels.set(px.subarray(0, count * ch), o);
      else for (let i = 0; i < count; i++) for (let c = 0; c < ch; c++) this.out.pixels[o + i * step * ch + c] = px[i * ch + c]!;
      return;
    }
    const dy = this.rowOf(y);
    let base = 0;
    if (this.mode === "rows") {
      if (dy !== this.band) {
        if (this.band >= 0) this.flushBand();
        this.band = dy;
      }
    } else {
      base = dy * this.out.width * ch;
    }
    // Integer stepping keeps dx = floor(x * width / srcWidth) exact without a per-column table
    // (which would grow with the source): acc = x * width - dx * srcWidth.
    const { width } = this.out;
    const sw = this.srcWidth;
    const inc = step * width;
    let dx = floorDiv(x0 * width, sw);
    let acc = x0 * width - dx * sw;
    for (let i = 0, p = 0; i < count; i++, p += ch) {
      const o = base + dx * ch;
      if (ch === 4) {
        const a = px[p + 3]!;
        sums[o]! += px[p]! * a;
        sums[o + 1]! += px[p + 1]! * a;
        sums[o + 2]! += px[p + 2]! * a;
        sums[o + 3]! += a;
      } else {
        sums[o]! += px[p]!;
        sums[o + 1]! += px[p + 1]!;
        sums[o + 2]! += px[p + 2]!;
      }
      for (acc += inc; acc >= sw; acc -= sw) dx++;
    }
  }

  private resolveRow(dy: number, sumsBase: number): void {
    const { width, pixels } = this.out;
    const ch = this.channels;
    const sums = this.sums!;
    const rows = this.rowSpan(dy);
    for (let dx = 0; dx < width; dx++) {
      const s = sumsBase + dx * ch;
      const o = (dy * width + dx) * ch;
      const n = this.colSpan[dx]! * rows;
      if (ch === 4) {
        const a = sums[s + 3]!;
        pixels[o + 3] = Math.round(a / n);
        for (let c = 0; c < 3; c++) pixels[o + c] = a > 0 ? Math.round(sums[s + c]! / a) : 0;
      } else {
        for (let c = 0; c < 3; c++) pixels[o + c] = Math.round(sums[s + c]! / n);
      }
    }
  }

  private flushBand(): void {
    this.resolveRow(this.band, 0);
    this.sums!.fill(0);
  }

  /** The destination raster; every source pixel must have been added. */
  finish(): Raster {
    if (this.sums !== null) {
      if (this.mode === "rows") {
        if (this.band >= 0) this.flushBand();
        this.band = -1;
      } else {
        const rowLength = this.out.width * this.channels;
        for (let dy = 0; dy < this.out.height; dy++) this.resolveRow(dy, dy * rowLength);
      }
    }
    return this.out;
  }
}

/** The raster shrunk to at most `maxWidth` wide by area averaging; the input itself when already narrow enough. */
export function downscaleRaster(raster: Raster, maxWidth: number): Raster {
  const size = scaledSize(raster.width, raster.height, maxWidth);
  if (size.width === raster.width) return raster;
  const { width, height, channels, pixels } = raster;
  const acc = new AreaAccumulator(width, height, size.width, size.height, channels, "rows");
  const rowLength = width * channels;
  for (let y = 0; y < height; y++) acc.add(y, pixels.subarray(y * rowLength, (y + 1) * rowLength), width);
  return acc.finish();
}

/**
 * The raster turned upright for an EXIF orientation (the transform the tag asks for: 2 mirror
 * horizontally, 3 rotate 180, 4 mirror vertically, 5 transpose, 6 rotate 90 clockwise,
 * 7 transverse, 8 rotate 270 clockwise); 5-8 swap width and height. Orientation 1 returns the input.
 */
export function orientRaster(raster: Raster, orientation: Orientation): Raster {
  if (orientation === 1) return raster;
  const { width: w, height: h, channels: ch, pixels: src } = raster;
  const swap = orientation >= 5;
  const outW = swap ? h : w;
  const outH = swap ? w : h;
  const out = new Uint8Array(src.length);
  // Output (x, y) reads source (sx, sy); for 5-8 the source column follows the output row.
  const mirrorX = orientation === 2 || orientation === 3 || orientation === 7 || orientation === 8;
  const mirrorY = orientation === 3 || orientation === 4 || orientation === 6 || orientation === 7;
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) {
      let sx = swap ? y : x;
      let sy = swap ? x : y;
      if (mirrorX) sx = w - 1 - sx;
      if (mirrorY) sy = h - 1 - sy;
      const s = (sy * w + sx) * ch;
      const o = (y * outW + x) * ch;
      for (let c = 0; c < ch; c++) out[o + c] = src[s + c]!;
    }
  }
  return { width: outW, height: outH, channels: ch, pixels: out };
}
