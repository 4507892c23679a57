/**
 * Uncompressed BMP decoding straight into the area-averaging downscaler: rows are read from the
 * encoded bytes in top-to-bottom order and converted a segment at a time, so memory beyond the
 * input is the destination raster plus a few kilobytes.
 */
import { u16le, u32le } from "./bytes";
import { ImageStructureError, UnsupportedImageError } from "./exif";
import type { Raster } from "./raster";
import { AreaAccumulator, scaledSize } from "./resize";

function fail(why: string): never {
  throw new ImageStructureError(`BMP: ${why}`);
}

/** Pixels converted per call into the accumulator; bounds the scratch buffer on very wide images. */
const SEGMENT = 1024;

/** Extracts one colour field of a 16/32-bit pixel and scales it to 8 bits. */
interface Field {
  mask: number;
  shift: number;
  drop: number; // low bits discarded when the field is wider than 8 bits
  lut: Uint8Array;
}

function field(mask: number): Field {
  mask >>>= 0;
  if (mask === 0) return { mask, shift: 0, drop: 0, lut: new Uint8Array(1) };
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  let bits = 0;
  while (bits + shift < 32 && (mask >>> (shift + bits)) & 1) bits++;
  mask = (2 ** bits - 1) * 2 ** shift; // a non-contiguous mask keeps its lowest run only
  const drop = Math.max(0, bits - 8);
  const max = (1 << (bits - drop)) - 1;
  const lut = new Uint8Array(max + 1);
  for (let v = 0; v <= max; v++) lut[v] = Math.round((v * 255) / max);
  return { mask, shift, drop, lut };
}

const read = (f: Field, px: number): number => f.lut[((px & f.mask) >>> f.shift) >>> f.drop]!;

interface BmpLayout {
  width: number;
  height: number;
  topDown: boolean;
  bitCount: number;
  pixelOffset: number;
  stride: number;
  palette: Uint8Array; // 256 RGB entries; indices past the file's palette stay black
  fields: [Field, Field, Field, Field] | null; // r, g, b, a for 16/32 bits
}

/**
 * Reads the headers the way `checkBmp` validates them (header sizes 12, 40, 52, 56, 64, 108, 124;
 * planes 1; 1/4/8/16/24/32 bits); only BI_RGB and, for 16/32 bits, BI_BITFIELDS are decoded.
 */
function layout(b: Uint8Array): BmpLayout {
  const n = b.length;
  if (n < 26 || b[0] !== 0x42 || b[1] !== 0x4d) fail("bad signature");
  const headerSize = u32le(b, 14);
  if (![12, 40, 52, 56, 64, 108, 124].includes(headerSize) || 14 + headerSize > n) fail("bad info header");
  const core = headerSize === 12;
  const width = core ? u16le(b, 18) : u32le(b, 18) | 0;
  const rawHeight = core ? u16le(b, 20) : u32le(b, 22) | 0;
  if (width <= 0 || rawHeight === 0 || rawHeight === -0x80000000) fail("bad dimensions");
  const planes = u16le(b, core ? 22 : 26);
  const bitCount = u16le(b, core ? 24 : 28);
  if (planes !== 1 || ![1, 4, 8, 16, 24, 32].includes(bitCount)) fail("bad plane or bit count");
  const compression = core ? 0 : u32le(b, 30);
  // The OS/2 2.x header (64 bytes) gives 3 and 4 other meanings (Huffman 1D, RLE24).
  const bitfields = compression === 3 && headerSize !== 64 && (bitCount === 16 || bitCount === 32);
  if (compression !== 0 && !bitfields) {
    const kind = compression === 1 || compression === 2 ? "RLE-compressed" : `compression type ${compression}`;
    throw new UnsupportedImageError(`BMP: ${kind} images are not supported`);
  }
  const topDown = rawHeight < 0;
  const height = Math.abs(rawHeight);
  const pixelOffset = u32le(b, 10);
  const stride = Math.floor((bitCount * width + 31) / 32) * 4;
  if (pixelOffset < 14 + headerSize || pixelOffset + stride * height > n) fail("truncated pixel data");

  const palette = new Uint8Array(256 * 3);
  let fields: BmpLayout["fields"] = null;
  if (bitCount <= 8) {
    const entrySize = core ? 3 : 4;
    const start = 14 + headerSize;
    const declared = !core && u32le(b, 46) > 0 ? u32le(b, 46) : 1 << bitCount;
    const count = Math.min(declared, 1 << bitCount, Math.floor(Math.max(0, pixelOffset - start) / entrySize));
    for (let i = 0; i < count; i++) {
      const p = start + i * entrySize; // stored blue, green, red
      palette[i * 3] = b[p + 2]!;
      palette[i * 3 + 1] = b[p + 1]!;
      palette[i * 3 + 2] = b[p]!;
    }
  } else if (bitCount !== 24) {
    // Masks follow the 40-byte header, or sit at the same offset inside the larger ones; only
    // headers of 56 bytes and more have the alpha mask.
    let masks = bitCount === 16 ? [0x7c00, 0x03e0, 0x001f, 0] : [0xff0000, 0xff00, 0xff, 0];
    if (bitfields) {
      if (14 + 40 + 12 > pixelOffset) fail("truncated colour masks");
      masks = [u32le(b, 54), u32le(b, 58), u32le(b, 62), headerSize >= 56 ? u32le(b, 66) : 0];
    }
    fields = [field(masks[0]!), field(masks[1]!), field(masks[2]!), field(masks[3]!)];
  }
  return { width, height, topDown, bitCount, pixelOffset, stride, palette, fields };
}

/**
 * Throws unless `decodeBmpScaled` can decode the file: `UnsupportedImageError` for RLE and other
 * compressed BMPs, `ImageStructureError` for broken headers. Reads the headers only.
 */
export function checkBmpDecodable(bytes: Uint8Array): void {
  layout(bytes);
}

/**
 * Decodes an uncompressed BMP, shrunk by area averaging to at most `maxWidth` wide (never
 * enlarged): RGBA when a BI_BITFIELDS alpha mask is present, RGB otherwise. RLE and other
 * compressed BMPs throw `ImageStructureError`. Callers check the pixel count first.
 */
export function decodeBmpScaled(bytes: Uint8Array, maxWidth: number): Raster {
  const l = layout(bytes);
  const { width, height, bitCount, palette, fields } = l;
  const channels = fields && fields[3].mask !== 0 ? 4 : 3;
  const size = scaledSize(width, height, maxWidth);
  const acc = new AreaAccumulator(width, height, size.width, size.height, channels, "rows");
  const seg = new Uint8Array(SEGMENT * channels);
  for (let y = 0; y < height; y++) {
    const row = l.pixelOffset + (l.topDown ? y : height - 1 - y) * l.stride;
    for (let x0 = 0; x0 < width; x0 += SEGMENT) {
      const count = Math.min(SEGMENT, width - x0);
      for (let i = 0, o = 0; i < count; i++, o += channels) {
        const x = x0 + i;
        if (bitCount <= 8) {
          const bit = x * bitCount;
          const index = (bytes[row + (bit >> 3)]! >> (8 - bitCount - (bit & 7))) & ((1 << bitCount) - 1);
          seg[o] = palette[index * 3]!;
          seg[o + 1] = palette[index * 3 + 1]!;
          seg[o + 2] = palette[index * 3 + 2]!;
        } else if (bitCount === 24) {
          const p = row + x * 3;
          seg[o] = bytes[p + 2]!;
          seg[o + 1] = bytes[p + 1]!;
          seg[o + 2] = bytes[p]!;
        } else {
          const px = bitCount === 16 ? u16le(bytes, row + x * 2) : u32le(bytes, row + x * 4);
          const [r, g, b, a] = fields!;
          seg[o] = read(r, px);
          seg[o + 1] = read(g, px);
          seg[o + 2] = read(b, px);
          if (channels === 4) seg[o + 3] = read(a, px);
        }
      }
      acc.add(y, seg, count, x0);
    }
  }
  return acc.finish();
}
