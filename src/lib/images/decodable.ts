import { checkBmpDecodable } from "./bmp-decode-scaled";
import { PHOTON_MAX_PIXELS } from "./encode";
import { UnsupportedImageError } from "./exif";
import type { ImageFormat } from "./formats";
import { parseJpeg } from "./jpeg-parse";

/**
 * What the media job's decoders (src/lib/images/thumbnails.ts) can decode, checked at upload from
 * the headers, so that an image they could never decode is refused at once instead of being
 * stored and then rejected.
 */

/**
 * The most pixels an image of `format` may have to be decoded: GIF and WebP are decoded whole by
 * photon, up to `PHOTON_MAX_PIXELS`; the other formats stream, and only the role's cap applies.
 */
export function decodablePixels(format: ImageFormat): number {
  return format === "gif" || format === "webp" ? PHOTON_MAX_PIXELS : Number.POSITIVE_INFINITY;
}

/**
 * Throws `UnsupportedImageError` for a variant of the format the decoders cannot decode (JPEG:
 * lossless, hierarchical, arithmetic-coded, 12-bit, CMYK/YCCK or other component counts than 1
 * and 3; BMP: RLE and other compression) and `ImageStructureError` for headers they cannot read.
 * Whether the pixel data itself decodes is found out by the media job, which decodes it in full.
 */
export function assertDecodableVariant(bytes: Uint8Array, format: ImageFormat): void {
  if (format === "jpeg") {
    const components = parseJpeg(bytes).components.length;
    if (components !== 1 && components !== 3) {
      throw new UnsupportedImageError(`JPEG: ${components}-component images (CMYK, YCCK) are not supported`);
    }
  } else if (format === "bmp") {
    checkBmpDecodable(bytes);
  }
}
