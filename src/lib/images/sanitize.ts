import { ImageStructureError } from "./exif";
import type { ImageFormat } from "./formats";
import { checkBmp, sanitizeGif } from "./sanitize-gif-bmp";
import { sanitizeJpeg } from "./sanitize-jpeg";
import { sanitizePng } from "./sanitize-png";
import { sanitizeWebp } from "./sanitize-webp";
import type { SanitizedImage } from "./sanitized-image";

export { ImageStructureError };

const SANITIZERS: Record<ImageFormat, (bytes: Uint8Array) => Omit<SanitizedImage, "format">> = {
  jpeg: sanitizeJpeg,
  png: sanitizePng,
  gif: sanitizeGif,
  webp: sanitizeWebp,
  bmp: checkBmp,
};

/**
 * Strips metadata on the encoded structure, never decoding pixels. Kept data is copied once into
 * the output (none at all when nothing is removed). Throws ImageStructureError on a malformed or
 * truncated file, or on trailing data that could hide a second file (a polyglot).
 */
export function sanitizeImage(bytes: Uint8Array, format: ImageFormat): SanitizedImage {
  const result = SANITIZERS[format](bytes);
  const untouched =
    result.bytes.buffer === bytes.buffer && result.bytes.byteOffset === bytes.byteOffset && result.bytes.length === bytes.length;
  return { ...result, bytes: untouched ? bytes : result.bytes, format };
}
