/**
 * Builders of real image files for the image tests, made in code (no binaries): a JPEG from the
 * test encoder, a PNG deflated with CompressionStream, a hand-written GIF89a, a VP8L WebP and a
 * BMP, each with the kinds of metadata cameras and editors add.
 */
import { encodeJpeg, type JpegOptions, type Rgb } from "./image-fixtures-jpeg";
import { cameraExif, SECRETS } from "./image-fixtures-tiff";

export { buildTiff, type Ifd, T } from "./image-fixtures-tiff";
export { cameraExif, encodeJpeg, SECRETS };

const text = (s: string) => new TextEncoder().encode(s);

export function concat(...parts: (Uint8Array | number[])[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Texts planted in XMP, IPTC and comments that must never survive sanitising. */
export const PLANTED = {
  xmp: `http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x="adobe:ns:meta/"><exif:GPSLatitude>52,22.5N</exif:GPSLatitude><dc:creator>XMP-CREATOR-SECRET</dc:creator></x:xmpmeta>`,
  extendedXmp: "http://ns.adobe.com/xmp/extension/\0" + "0123456789ABCDEF0123456789ABCDEF" + "EXTENDED-XMP-SECRET",
  iptc: "IPTC-BYLINE-SECRET",
  comment: "COMMENT-SECRET-TEXT",
  pngText: "PNG-TEXT-SECRET",
  gifComment: "GIF-COMMENT-SECRET",
  mpf: "MPF-SECONDARY-IMAGE",
} as const;

/** A 16x8 picture whose every pixel differs. */
export const testPixel = (x: number, y: number): Rgb => [x * 16, y * 32, 255 - x * 8 - y * 4];

function jpegSegment(marker: number, payload: Uint8Array): Uint8Array {
  return concat([0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff], payload);
}

/** The segments a phone, Lightroom and Photoshop would add; `kept` ones must survive. */
export function jpegMetadataSegments(littleEndian: boolean, orientation = 6) {
  const iptc = concat(
    text("Photoshop 3.0\0"),
    text("8BIM"),
    [0x04, 0x04, 0, 0, 0, 0, 0, 25],
    [0x1c, 0x02, 0x50, 0, 18],
    text(PLANTED.iptc),
    [0, 0],
  );
  const icc = concat(text("ICC_PROFILE\0"), [1, 1], new Uint8Array(128).fill(0x11));
  const adobe = concat(text("Adobe\0"), [0x64, 0, 0, 0, 0, 1]);
  return {
    dropped: [
      jpegSegment(0xe1, concat(text("Exif\0\0"), cameraExif(littleEndian, orientation))), // replaced
      jpegSegment(0xe1, text(PLANTED.xmp)),
      jpegSegment(0xe1, text(PLANTED.extendedXmp)),
      jpegSegment(0xed, iptc),
      jpegSegment(0xfe, text(PLANTED.comment)),
      jpegSegment(0xe2, concat(text("MPF\0"), text(PLANTED.mpf))),
      jpegSegment(0xe0, concat(text("JFXX\0"), [0x13], text(SECRETS.thumbnail))),
    ],
    kept: [jpegSegment(0xe2, icc), jpegSegment(0xee, adobe)],
  };
}

/** Inserts segments right after the encoder's JFIF APP0 (SOI + 18 bytes). */
export function insertAfterJfif(jpeg: Uint8Array, segments: Uint8Array[]): Uint8Array {
  return concat(jpeg.subarray(0, 20), ...segments, jpeg.subarray(20));
}

/** A real 16x8 JPEG carrying every kind of metadata. */
export function jpegWithMetadata(littleEndian = true, options: JpegOptions = {}, orientation = 6): Uint8Array {
  const { dropped, kept } = jpegMetadataSegments(littleEndian, orientation);
  return insertAfterJfif(encodeJpeg(16, 8, testPixel, options), [dropped[0]!, kept[0]!, ...dropped.slice(1), kept[1]!]);
}

/**
 * A ~`targetBytes` JPEG that is still valid: one noise strip of MCUs is encoded once at quality
 * 100, and since each MCU row is its own restart interval, rows can be repeated with RSTn markers
 * between them. A chain of 64 KiB APP11 segments adds to the header.
 */
export function largeJpeg(targetBytes: number, appSegments = 32): Uint8Array {
  let seed = 12345;
  const noise = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
  const width = 2400;
  const strip = encodeJpeg(width, 8, () => [noise(), noise(), noise()], { quality: 100, restartInterval: width / 8 });
  let sos = 2;
  while (!(strip[sos] === 0xff && strip[sos + 1] === 0xda)) sos += 2 + ((strip[sos + 2]! << 8) | strip[sos + 3]!);
  const dataStart = sos + 2 + ((strip[sos + 2]! << 8) | strip[sos + 3]!);
  const row = strip.subarray(dataStart, strip.length - 2);
  const app = jpegSegment(0xeb, new Uint8Array(65533 - 2).fill(0x41));
  const fixed = dataStart + appSegments * app.length + 2;
  const rows = Math.max(1, Math.ceil((targetBytes - fixed) / (row.length + 2)));
  const out = new Uint8Array(fixed + rows * row.length + (rows - 1) * 2);
  out.set(strip.subarray(0, 20));
  let o = 20;
  for (let i = 0; i < appSegments; i++, o += app.length) out.set(app, o);
  out.set(strip.subarray(20, dataStart), o);
  // Patch the SOF0 height to the repeated row count.
  for (let p = o; p < o + dataStart - 20; p++) {
    if (out[p] === 0xff && out[p + 1] === 0xc0) {
      out[p + 5] = (rows * 8) >> 8;
      out[p + 6] = (rows * 8) & 0xff;
    }
  }
  o += dataStart - 20;
  for (let r = 0; r < rows; r++) {
    out.set(row, o);
    o += row.length;
    if (r < rows - 1) {
      out[o++] = 0xff;
      out[o++] = 0xd0 + (r % 8);
    }
  }
  out[o++] = 0xff;
  out[o++] = 0xd9;
  return out;
}

async function pipe(data: Uint8Array, transform: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([data]).stream().pipeThrough(transform)).arrayBuffer());
}
export const deflate = (data: Uint8Array) => pipe(data, new CompressionStream("deflate"));
export const inflate = (data: Uint8Array) => pipe(data, new DecompressionStream("deflate"));

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function pngChunk(type: string, data: Uint8Array | number[]): Uint8Array {
  const body = concat(text(type), data);
  const out = concat([0, 0, 0, 0], body, [0, 0, 0, 0]);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, body.length - 4);
  dv.setUint32(out.length - 4, crc(body));
  return out;
}

/** The raw scanlines (filter type 0, RGB) of the 16x8 test picture. */
export function pngRaw(width = 16, height = 8): Uint8Array {
  const raw = new Uint8Array(height * (1 + width * 3));
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set(testPixel(x, y), y * (1 + width * 3) + 1 + x * 3);
  return raw;
}

/** A 16x8 RGB PNG; `before` chunks go after IHDR, `after` ones between IDAT and IEND. */
export async function pngImage(before: Uint8Array[] = [], after: Uint8Array[] = []): Promise<Uint8Array> {
  const ihdr = [0, 0, 0, 16, 0, 0, 0, 8, 8, 2, 0, 0, 0];
  const idat = await deflate(pngRaw());
  return concat(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    pngChunk("IHDR", ihdr),
    ...before,
    pngChunk("IDAT", idat.subarray(0, 10)), // split so that several IDATs are exercised
    pngChunk("IDAT", idat.subarray(10)),
    ...after,
    pngChunk("IEND", []),
  );
}

/** A PNG with tEXt, zTXt, iTXt (XMP), eXIf, tIME and a private chunk, plus kept gAMA/pHYs/sRGB. */
export async function pngWithMetadata(littleEndian = false): Promise<Uint8Array> {
  return pngImage(
    [
      pngChunk("gAMA", [0, 0, 0xb1, 0x8f]),
      pngChunk("sRGB", [0]),
      pngChunk("pHYs", [0, 0, 0x0b, 0x13, 0, 0, 0x0b, 0x13, 1]),
      pngChunk("eXIf", cameraExif(littleEndian)),
      pngChunk("tEXt", text(`Comment\0${PLANTED.pngText}`)),
      pngChunk("zTXt", concat(text("Author\0\0"), await deflate(text(PLANTED.pngText)))),
      pngChunk("iTXt", text(`XML:com.adobe.xmp\0\0\0\0\0${PLANTED.xmp}`)),
      pngChunk("tIME", [0x07, 0xe8, 5, 6, 7, 8, 9]),
      pngChunk("prVt", text("private ancillary chunk")),
    ],
    [pngChunk("tEXt", text(`Trailer\0${PLANTED.pngText}`))],
  );
}

export * from "./image-fixtures-gif-webp-bmp";
