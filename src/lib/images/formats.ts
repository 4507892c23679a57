import { ascii, startsWith, u16be, u16le, u32be, u32le } from "./bytes";

export const IMAGE_FORMATS = ["jpeg", "png", "gif", "webp", "bmp"] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** MIME type and accepted file-name extensions (lower-case, without dot) per format. */
export const IMAGE_TYPES: Record<ImageFormat, { mime: string; extensions: readonly string[] }> = {
  jpeg: { mime: "image/jpeg", extensions: ["jpg", "jpeg"] },
  png: { mime: "image/png", extensions: ["png"] },
  gif: { mime: "image/gif", extensions: ["gif"] },
  webp: { mime: "image/webp", extensions: ["webp"] },
  bmp: { mime: "image/bmp", extensions: ["bmp"] },
};

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The format the bytes are, by magic number, or null. Needs only the first 16 bytes. */
export function sniffImageFormat(head: Uint8Array): ImageFormat | null {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (head.length >= 8 && PNG_SIGNATURE.every((v, i) => head[i] === v)) return "png";
  if (startsWith(head, 0, "GIF87a") || startsWith(head, 0, "GIF89a")) return "gif";
  if (startsWith(head, 0, "RIFF") && startsWith(head, 8, "WEBP")) return "webp";
  // "BM" alone is two printable letters that many text files start with; the reserved words
  // must be zero and the pixel offset must lie past the smallest headers.
  if (head.length >= 14 && startsWith(head, 0, "BM") && u32le(head, 6) === 0 && u32le(head, 10) >= 26) return "bmp";
  return null;
}

type Size = { width: number; height: number };

const sized = (width: number, height: number): Size | null => (width > 0 && height > 0 ? { width, height } : null);

/**
 * Width and height from the headers, without decoding (JPEG: SOFn; PNG: IHDR; GIF: logical
 * screen; WebP: VP8/VP8L/VP8X; BMP: info header, abs(height)); null when broken or truncated.
 */
export function imageDimensions(bytes: Uint8Array, format: ImageFormat): Size | null {
  switch (format) {
    case "jpeg":
      return jpegFrameSize(bytes);
    case "png":
      if (bytes.length < 24 || sniffImageFormat(bytes) !== "png" || !startsWith(bytes, 12, "IHDR")) return null;
      return sized(u32be(bytes, 16), u32be(bytes, 20));
    case "gif":
      if (bytes.length < 10 || sniffImageFormat(bytes) !== "gif") return null;
      return sized(u16le(bytes, 6), u16le(bytes, 8));
    case "webp":
      return webpCanvasSize(bytes);
    case "bmp":
      return bmpSize(bytes);
  }
}

/** True for the start-of-frame markers of the non-hierarchical processes (T.81 table B.1). */
export const isSupportedSof = (m: number): boolean =>
  m === 0xc0 || m === 0xc1 || m === 0xc2 || m === 0xc3 || m === 0xc9 || m === 0xca || m === 0xcb;

function jpegFrameSize(b: Uint8Array): Size | null {
  if (sniffImageFormat(b) !== "jpeg") return null;
  let pos = 2;
  while (pos + 4 <= b.length) {
    if (b[pos] !== 0xff) return null;
    const marker = b[pos + 1]!;
    if (marker === 0xff) {
      pos++;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return null; // no frame header before the scan
    const len = u16be(b, pos + 2);
    if (len < 2) return null;
    if (isSupportedSof(marker)) {
      if (len < 8 || pos + 2 + len > b.length) return null;
      return sized(u16be(b, pos + 7), u16be(b, pos + 5));
    }
    pos += 2 + len;
  }
  return null;
}

function webpCanvasSize(b: Uint8Array): Size | null {
  if (b.length < 30 || sniffImageFormat(b) !== "webp") return null;
  const fourcc = ascii(b, 12, 4);
  const d = 20; // first chunk's payload
  if (fourcc === "VP8X") {
    const w = (b[d + 4]! | (b[d + 5]! << 8) | (b[d + 6]! << 16)) + 1;
    const h = (b[d + 7]! | (b[d + 8]! << 8) | (b[d + 9]! << 16)) + 1;
    return sized(w, h);
  }
  if (fourcc === "VP8L") {
    if (b[d] !== 0x2f) return null;
    const v = u32le(b, d + 1);
    return sized((v & 0x3fff) + 1, ((v >>> 14) & 0x3fff) + 1);
  }
  if (fourcc === "VP8 ") {
    // Frame tag (3 bytes, bit 0 clear on a key frame), start code 9d 01 2a, then 14-bit sizes.
    if ((b[d]! & 1) !== 0 || b[d + 3] !== 0x9d || b[d + 4] !== 0x01 || b[d + 5] !== 0x2a) return null;
    return sized(u16le(b, d + 6) & 0x3fff, u16le(b, d + 8) & 0x3fff);
  }
  return null;
}

function bmpSize(b: Uint8Array): Size | null {
  if (b.length < 26 || sniffImageFormat(b) !== "bmp") return null;
  const headerSize = u32le(b, 14);
  if (headerSize === 12) return sized(u16le(b, 18), u16le(b, 20));
  if (headerSize < 40 || b.length < 26) return null;
  const width = u32le(b, 18) | 0;
  const height = u32le(b, 22) | 0;
  if (width <= 0 || height === 0 || height === -0x80000000) return null;
  return sized(width, Math.abs(height));
}
