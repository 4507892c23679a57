import { ascii, ByteSink, startsWith, u16le, u32le } from "./bytes";
import { ImageStructureError } from "./exif";
import { imageDimensions } from "./formats";
import type { SanitizedImage } from "./sanitized-image";

type Result = Omit<SanitizedImage, "format">;

function fail(format: string, why: string): never {
  throw new ImageStructureError(`${format}: ${why}`);
}

/** Application extensions that drive animation; every other one (XMP among them) is dropped. */
const KEPT_APPLICATIONS = new Set(["NETSCAPE2.0", "ANIMEXTS1.0"]);

/** Position after a chain of data sub-blocks (GIF89a section 15) ending with a zero-size block. */
function skipSubBlocks(b: Uint8Array, pos: number): number {
  for (;;) {
    if (pos >= b.length) fail("GIF", "truncated data sub-blocks");
    const size = b[pos]!;
    pos += 1 + size;
    if (size === 0) return pos;
  }
}

const colorTableSize = (packed: number) => (packed & 0x80 ? 3 * (1 << ((packed & 0x07) + 1)) : 0);

/** Walks the GIF blocks; drops comments and non-animation application extensions. */
export function sanitizeGif(b: Uint8Array): Result {
  const n = b.length;
  if (!startsWith(b, 0, "GIF87a") && !startsWith(b, 0, "GIF89a")) fail("GIF", "bad signature");
  const size = imageDimensions(b, "gif") ?? fail("GIF", "no logical screen size");
  let pos = 13 + colorTableSize(b[10] ?? 0);
  if (pos > n) fail("GIF", "truncated header");
  const sink = new ByteSink();
  sink.push(b.subarray(0, pos));
  let images = 0;
  for (;;) {
    if (pos >= n) fail("GIF", "truncated before the trailer");
    const start = pos;
    const introducer = b[pos]!;
    if (introducer === 0x3b) {
      if (images === 0) fail("GIF", "no image");
      sink.push(b.subarray(pos, pos + 1));
      if (pos + 1 !== n) fail("GIF", "data after the trailer");
      break;
    }
    if (introducer === 0x2c) {
      if (pos + 10 > n) fail("GIF", "truncated image descriptor");
      pos += 10 + colorTableSize(b[pos + 9]!);
      if (pos >= n) fail("GIF", "truncated image");
      const minCodeSize = b[pos]!;
      if (minCodeSize < 1 || minCodeSize > 11) fail("GIF", "bad LZW code size");
      pos = skipSubBlocks(b, pos + 1);
      images++;
      sink.push(b.subarray(start, pos));
    } else if (introducer === 0x21) {
      if (pos + 2 > n) fail("GIF", "truncated extension");
      const label = b[pos + 1]!;
      pos = skipSubBlocks(b, pos + 2);
      const keep =
        label === 0xf9 || // graphic control: frame timing and transparency
        label === 0x01 || // plain text: rendered content, not metadata
        (label === 0xff && b[start + 2] === 11 && KEPT_APPLICATIONS.has(ascii(b, start + 3, 11)));
      if (keep) sink.push(b.subarray(start, pos));
    } else {
      fail("GIF", `unknown block 0x${introducer.toString(16)}`);
    }
  }
  return { bytes: sink.finish(), ...size, orientation: 1, metadata: {} };
}

const BMP_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

/** BMP has no metadata to strip: validates the size fields and returns the input itself. */
export function checkBmp(b: Uint8Array): Result {
  const n = b.length;
  if (n < 26 || !startsWith(b, 0, "BM")) fail("BMP", "bad signature");
  const fileSize = u32le(b, 2);
  if (fileSize > n) fail("BMP", "truncated");
  if (fileSize < n) fail("BMP", "data after the declared file size");
  const headerSize = u32le(b, 14);
  if (!BMP_HEADER_SIZES.has(headerSize) || 14 + headerSize > n) fail("BMP", "bad info header");
  const pixelOffset = u32le(b, 10);
  if (pixelOffset < 14 + headerSize || pixelOffset > n) fail("BMP", "bad pixel data offset");
  const size = imageDimensions(b, "bmp") ?? fail("BMP", "bad dimensions");
  const core = headerSize === 12;
  const planes = u16le(b, core ? 22 : 26);
  const bitCount = u16le(b, core ? 24 : 28);
  const compression = core ? 0 : u32le(b, 30);
  if (planes !== 1 || ![1, 4, 8, 16, 24, 32].includes(bitCount)) fail("BMP", "bad plane or bit count");
  if (compression === 0 || compression === 3) {
    // Uncompressed rows are padded to 4 bytes; the pixel array must fit in the file.
    const rowBytes = Math.floor((bitCount * size.width + 31) / 32) * 4;
    if (pixelOffset + rowBytes * size.height > n) fail("BMP", "truncated pixel data");
  }
  return { bytes: b, ...size, orientation: 1, metadata: {} };
}
