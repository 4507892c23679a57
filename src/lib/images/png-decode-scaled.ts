/**
 * Streaming PNG decoding straight into the area-averaging downscaler. The IDAT data is inflated
 * by DecompressionStream in small pieces, unfiltered one scanline at a time against the previous
 * one, converted to 8-bit RGB(A) a segment at a time and added to the destination, so memory is
 * two scanlines, the inflater's window and output, and the destination raster (plus, for
 * interlaced images, the destination's sums).
 */
import { ascii, u32be } from "./bytes";
import { ImageStructureError } from "./exif";
import type { Raster } from "./raster";
import { AreaAccumulator, scaledSize } from "./resize";
import { inflateZlib } from "./zlib-inflate";

function fail(why: string): never {
  throw new ImageStructureError(`PNG: ${why}`);
}

/** Pixels converted per call into the accumulator. */
const SEGMENT = 1024;
/** Longest scanline accepted: two are kept, so this bounds the decoder's own memory. */
const MAX_ROW_BYTES = 1 << 24;

const SAMPLES: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

interface PngInfo {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  interlaced: boolean;
  palette: Uint8Array | null;
  trns: Uint8Array | null;
  idat: Uint8Array[];
}

/** Walks the chunks (CRCs are left to `sanitizePng`, which checked them on upload). */
function parse(b: Uint8Array): PngInfo {
  if (b.length < 8 || u32be(b, 0) !== 0x89504e47 || u32be(b, 4) !== 0x0d0a1a0a) fail("bad signature");
  const info: PngInfo = { width: 0, height: 0, depth: 0, colorType: 0, interlaced: false, palette: null, trns: null, idat: [] };
  let pos = 8;
  for (;;) {
    if (pos + 12 > b.length) fail("truncated before IEND");
    const len = u32be(b, pos);
    const type = ascii(b, pos + 4, 4);
    const data = b.subarray(pos + 8, pos + 8 + len);
    if (len > 0x7fffffff || data.length !== len || pos + 12 + len > b.length) fail(`truncated ${type} chunk`);
    if (pos === 8 && (type !== "IHDR" || len !== 13)) fail("IHDR is not the first chunk");
    if (type === "IHDR") {
      if (pos !== 8) fail("second IHDR");
      Object.assign(info, {
        width: u32be(data, 0),
        height: u32be(data, 4),
        depth: data[8]!,
        colorType: data[9]!,
        interlaced: data[12] === 1,
      });
      if (info.width === 0 || info.height === 0 || info.width > 0x7fffffff || info.height > 0x7fffffff) fail("bad dimensions");
      if (!DEPTHS[info.colorType]?.includes(info.depth)) fail(`bad colour type ${info.colorType} / bit depth ${info.depth}`);
      if (data[10] !== 0 || data[11] !== 0 || data[12]! > 1) fail("unknown compression, filter or interlace method");
    } else if (type === "PLTE") {
      if (len % 3 !== 0 || len > 768) fail("bad PLTE");
      info.palette = data;
    } else if (type === "tRNS") {
      info.trns = data;
    } else if (type === "IDAT") {
      info.idat.push(data);
    } else if (type === "IEND") {
      break;
    } else if ((b[pos + 4]! & 0x20) === 0) {
      fail(`unknown critical chunk ${type}`);
    }
    pos += 12 + len;
  }
  if (info.idat.length === 0) fail("no image data");
  if (info.colorType === 3 && !info.palette) fail("palette image without PLTE");
  return info;
}

/** Adam7 passes: x0, y0, dx, dy; a plain image is one pass of step 1. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

interface Pass {
  x0: number;
  y0: number;
  dx: number;
  dy: number;
  width: number;
  rows: number;
  lineLength: number; // filter byte + packed samples
}

/**
 * Collects inflated bytes into scanlines and hands each, unfiltered, to `emit`. Keeps the current
 * and the previous scanline only.
 */
class Scanlines {
  private readonly passes: Pass[];
  private passIndex = 0;
  private row = 0;
  private filled = 0;
  private cur: Uint8Array;
  private prev: Uint8Array;

  constructor(
    info: PngInfo,
    private readonly bitsPerPixel: number,
    private readonly emit: (line: Uint8Array, pass: Pass, row: number) => void,
  ) {
    const geometry = info.interlaced ? ADAM7 : [[0, 0, 1, 1] as const];
    this.passes = geometry
      .map(([x0, y0, dx, dy]) => {
        const width = Math.ceil((info.width - x0) / dx);
        const rows = Math.ceil((info.height - y0) / dy);
        return { x0, y0, dx, dy, width, rows, lineLength: 1 + Math.ceil((width * bitsPerPixel) / 8) };
      })
      .filter((p) => p.width > 0 && p.rows > 0);
    const longest = Math.max(...this.passes.map((p) => p.lineLength));
    if (longest > MAX_ROW_BYTES) fail(`rows of ${longest} bytes are longer than supported`);
    this.cur = new Uint8Array(longest);
    this.prev = new Uint8Array(longest);
  }

  get done(): boolean {
    return this.passIndex >= this.passes.length;
  }

  /** Consumes inflated bytes; true once the last scanline has been emitted. */
  push(chunk: Uint8Array): boolean {
    let pos = 0;
    while (pos < chunk.length && !this.done) {
      const pass = this.passes[this.passIndex]!;
      const take = Math.min(pass.lineLength - this.filled, chunk.length - pos);
      this.cur.set(chunk.subarray(pos, pos + take), this.filled);
      this.filled += take;
      pos += take;
      if (this.filled < pass.lineLength) break;
      const line = this.cur.subarray(0, pass.lineLength);
      unfilter(line, this.row === 0 ? null : this.prev, Math.max(1, this.bitsPerPixel >> 3));
      this.emit(line, pass, this.row);
      [this.cur, this.prev] = [this.prev, this.cur];
      this.filled = 0;
      if (++this.row === pass.rows) {
        this.row = 0;
        this.passIndex++;
      }
    }
    return this.done;
  }
}

/** Reverses the scanline filter (PNG spec section 9) in place; `line[0]` is the filter type. */
function unfilter(line: Uint8Array, prev: Uint8Array | null, bpp: number): void {
  const n = line.length;
  const type = line[0]!;
  const up = (i: number) => (prev ? prev[i]! : 0);
  if (type === 0) return;
  if (type === 1) {
    for (let i = 1 + bpp; i < n; i++) line[i] = line[i]! + line[i - bpp]!;
  } else if (type === 2) {
    if (prev) for (let i = 1; i < n; i++) line[i] = line[i]! + prev[i]!;
  } else if (type === 3) {
    for (let i = 1; i < n; i++) line[i] = line[i]! + (((i > bpp ? line[i - bpp]! : 0) + up(i)) >> 1);
  } else if (type === 4) {
    for (let i = 1; i < n; i++) {
      const a = i > bpp ? line[i - bpp]! : 0;
      const b = up(i);
      const c = i > bpp ? up(i - bpp) : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      line[i] = line[i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
    }
  } else {
    fail(`unknown filter type ${type}`);
  }
}

/**
 * Writes `count` pixels starting at pixel `start` of an unfiltered scanline into `out` as 8-bit
 * RGB or RGBA. 16-bit samples are rounded to 8 bits; tRNS colour keys compare the full samples.
 */
type Converter = (line: Uint8Array, start: number, count: number, out: Uint8Array) => void;

function converter(info: PngInfo, channels: 3 | 4): Converter {
  const { depth, colorType: ct, trns } = info;
  const max = (1 << depth) - 1;
  // Sample k of the line (line[0] is the filter byte).
  const s =
    depth === 8
      ? (l: Uint8Array, k: number) => l[1 + k]!
      : depth === 16
        ? (l: Uint8Array, k: number) => (l[1 + 2 * k]! << 8) | l[2 + 2 * k]!
        : (l: Uint8Array, k: number) => (l[1 + ((k * depth) >> 3)]! >> (8 - depth - ((k * depth) & 7))) & max;
  const to8 = depth === 16 ? (v: number) => ((v + 128) / 257) | 0 : depth === 8 ? (v: number) => v : (v: number) => (v * 255) / max;
  const key = (i: number) => (trns && trns.length >= 2 * i + 2 ? (trns[2 * i]! << 8) | trns[2 * i + 1]! : -1);
  const alpha = channels === 4;
  if (ct === 3) {
    const pal = new Uint8Array(256 * 4);
    for (let i = 0; i < 256; i++) {
      pal.set(info.palette!.subarray(i * 3, i * 3 + 3), i * 4); // indices past PLTE stay opaque black
      pal[i * 4 + 3] = trns && i < trns.length ? trns[i]! : 255;
    }
    return (l, start, count, out) => {
      for (let i = 0; i < count; i++) for (let c = 0, p = s(l, start + i) * 4; c < channels; c++) out[i * channels + c] = pal[p + c]!;
    };
  }
  if (ct === 0) {
    const k = key(0);
    return (l, start, count, out) => {
      for (let i = 0, o = 0; i < count; i++, o += channels) {
        const v = s(l, start + i);
        out[o] = out[o + 1] = out[o + 2] = to8(v);
        if (alpha) out[o + 3] = v === k ? 0 : 255;
      }
    };
  }
  if (ct === 2) {
    const [kr, kg, kb] = [key(0), key(1), key(2)];
    return (l, start, count, out) => {
      for (let i = 0, o = 0, k = start * 3; i < count; i++, o += channels, k += 3) {
        const r = s(l, k);
        const g = s(l, k + 1);
        const b = s(l, k + 2);
        out[o] = to8(r);
        out[o + 1] = to8(g);
        out[o + 2] = to8(b);
        if (alpha) out[o + 3] = r === kr && g === kg && b === kb ? 0 : 255;
      }
    };
  }
  const grey = ct === 4;
  return (l, start, count, out) => {
    for (let i = 0, o = 0, k = start * SAMPLES[ct]!; i < count; i++, o += 4) {
      if (grey) {
        out[o] = out[o + 1] = out[o + 2] = to8(s(l, k++));
      } else {
        out[o] = to8(s(l, k++));
        out[o + 1] = to8(s(l, k++));
        out[o + 2] = to8(s(l, k++));
      }
      out[o + 3] = to8(s(l, k++));
    }
  };
}

/**
 * Decodes a PNG (every colour type and bit depth, interlaced or not), shrunk by area averaging
 * to at most `maxWidth` wide (never enlarged), as RGBA when it has an alpha channel or tRNS,
 * RGB otherwise. Structural errors throw `ImageStructureError`. Callers check the pixel count
 * first: memory grows with the destination, not with the source.
 */
export async function decodePngScaled(bytes: Uint8Array, maxWidth: number): Promise<Raster> {
  const info = parse(bytes);
  const { width, height, colorType } = info;
  const channels = colorType === 4 || colorType === 6 || info.trns !== null ? 4 : 3;
  const size = scaledSize(width, height, maxWidth);
  const convert = converter(info, channels);
  const seg = new Uint8Array(SEGMENT * channels);
  let acc: AreaAccumulator | undefined;
  const lines = new Scanlines(info, SAMPLES[colorType]! * info.depth, (line, pass, row) => {
    const y = pass.y0 + row * pass.dy;
    for (let start = 0; start < pass.width; start += SEGMENT) {
      const count = Math.min(SEGMENT, pass.width - start);
      convert(line, start, count, seg);
      acc!.add(y, seg, count, pass.x0 + start * pass.dx, pass.dx);
    }
  });
  // After Scanlines has checked the row length, so that absurd headers fail before allocating.
  acc = new AreaAccumulator(width, height, size.width, size.height, channels, info.interlaced ? "any" : "rows");
  for await (const chunk of inflateZlib(info.idat, "PNG")) if (lines.push(chunk)) break;
  if (!lines.done) fail("image data ends early");
  return acc.finish();
}
