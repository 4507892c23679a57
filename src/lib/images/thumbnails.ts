import { decodeBmpScaled } from "./bmp-decode-scaled";
import { decodeWithPhoton, encodeRaster, PHOTON_MAX_PIXELS } from "./encode";
import type { ImageFormat } from "./formats";
import { imageDimensions } from "./formats";
import { decodeJpegScaled, jpegScaleFor } from "./jpeg-decode-scaled";
import { decodePngScaled } from "./png-decode-scaled";
import type { Raster } from "./raster";
import { downscaleRaster } from "./resize";

/** One thumbnail, encoded. */
export interface Thumbnail {
  /** The width it was made for (its key); the image is narrower when the source is. */
  width: number;
  bytes: Uint8Array;
  contentType: string;
}

/**
 * The source decoded at no less than `width` pixels across (or whole, when narrower), in bounded
 * memory: JPEG with a reduced IDCT, PNG and BMP while streaming their rows; GIF and WebP have no
 * such decoder here, so only images photon can decode whole within a Worker's memory get
 * thumbnails (null otherwise: the image's own URL stands in).
 */
async function decodeAtLeast(bytes: Uint8Array, format: ImageFormat, width: number): Promise<Raster | null> {
  const size = imageDimensions(bytes, format);
  if (!size) return null;
  switch (format) {
    case "jpeg":
      return decodeJpegScaled(bytes, jpegScaleFor(size.width, width));
    case "png":
      return decodePngScaled(bytes, width);
    case "bmp":
      return decodeBmpScaled(bytes, width);
    case "gif":
    case "webp":
      return size.width * size.height <= PHOTON_MAX_PIXELS ? downscaleRaster(decodeWithPhoton(bytes), width) : null;
  }
}

/**
 * Thumbnails of an image at each of `widths` (never wider than the image): JPEG when opaque, PNG
 * when the image has an alpha channel. The source is decoded once, at the largest width, and
 * each smaller thumbnail is averaged down from the previous one. Null when the format and size
 * allow no bounded decode.
 */
export async function makeThumbnails(bytes: Uint8Array, format: ImageFormat, widths: readonly number[]): Promise<Thumbnail[] | null> {
  const descending = [...widths].sort((a, b) => b - a);
  let raster = await decodeAtLeast(bytes, format, descending[0]!);
  if (!raster) return null;
  const thumbnails: Thumbnail[] = [];
  for (const width of descending) {
    raster = downscaleRaster(raster, width);
    const encoded = encodeRaster(raster, raster.channels === 4 ? "png" : "jpeg");
    thumbnails.push({ width, ...encoded });
  }
  return thumbnails;
}
