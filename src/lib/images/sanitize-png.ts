import { ascii, ByteSink, crc32, startsWith, u32be } from "./bytes";
import { filterExif, ImageStructureError } from "./exif";
import type { SanitizedImage } from "./sanitized-image";

function fail(why: string): never {
  throw new ImageStructureError(`PNG: ${why}`);
}

/** Chunks that affect how pixels are decoded or shown (PNG 3rd ed. and APNG); all else goes. */
const KEEP = new Set([
  "IHDR",
  "PLTE",
  "IDAT",
  "IEND",
  "tRNS",
  "gAMA",
  "cHRM",
  "sRGB",
  "iCCP",
  "sBIT",
  "pHYs",
  "bKGD",
  "acTL",
  "fcTL",
  "fdAT",
]);

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  dv.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

type Result = Omit<SanitizedImage, "format">;

/** Walks the chunks (lengths and CRCs checked), keeping the listed ones and a filtered eXIf. */
export function sanitizePng(b: Uint8Array): Result {
  const n = b.length;
  if (n < 8 || u32be(b, 0) !== 0x89504e47 || u32be(b, 4) !== 0x0d0a1a0a) fail("bad signature");
  const sink = new ByteSink();
  sink.push(b.subarray(0, 8));
  let width = 0;
  let height = 0;
  let orientation = 1;
  let metadata: Record<string, string | number> = {};
  let exifSeen = false;
  let idat = false;
  let pos = 8;
  for (;;) {
    if (pos + 12 > n) fail("truncated before IEND");
    const len = u32be(b, pos);
    if (len > 0x7fffffff) fail("chunk length out of range");
    const end = pos + 12 + len;
    if (end > n) fail("chunk runs past the end");
    const type = ascii(b, pos + 4, 4);
    if (!/^[A-Za-z]{4}$/.test(type)) fail("bad chunk type");
    if (crc32(b.subarray(pos + 4, pos + 8 + len)) !== u32be(b, pos + 8 + len)) fail(`bad CRC in ${type}`);
    const data = b.subarray(pos + 8, pos + 8 + len);
    if (pos === 8) {
      if (type !== "IHDR" || len !== 13) fail("IHDR is not the first chunk");
      width = u32be(data, 0);
      height = u32be(data, 4);
      if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) fail("bad dimensions");
    } else if (type === "IHDR") {
      fail("second IHDR");
    }
    if (type === "IDAT") idat = true;
    if (type === "IEND") {
      if (!idat) fail("no image data");
      sink.push(b.subarray(pos, end));
      if (end !== n) fail("data after IEND");
      break;
    }
    if (type === "eXIf") {
      if (!exifSeen) {
        exifSeen = true;
        // Some writers keep the JPEG APP1 prefix in the chunk.
        const tiff = startsWith(data, 0, "Exif\0\0") ? data.subarray(6) : data;
        try {
          const result = filterExif(tiff);
          orientation = result.orientation;
          metadata = result.metadata;
          if (result.tiff) sink.push(chunk("eXIf", result.tiff));
        } catch (e) {
          if (!(e instanceof ImageStructureError)) throw e; // unreadable: dropped, as other metadata
        }
      }
    } else if (KEEP.has(type)) {
      sink.push(b.subarray(pos, end));
    } else if ((b[pos + 4]! & 0x20) === 0) {
      fail(`unknown critical chunk ${type}`); // a decoder must refuse it too (PNG 5.4)
    }
    pos = end;
  }
  return { bytes: sink.finish(), width, height, orientation, metadata };
}
