import { decodeBmpScaled } from "./bmp-decode-scaled";
import { decodeWithPhoton, encodeRaster, PHOTON_MAX_PIXELS } from "./encode";
import type { ImageFormat } from "./formats";
import { imageDimensions } from "./formats";
import { decodeJpegScaled, jpegScaleFor } from "./jpeg-decode-scaled";
import { decodePngScaled } from "./png-decode-scaled";
import type { Raster } from "./raster";
import { downscaleRaster, scaledSize } from "./resize";

/** Thumbnails are made for images at most this many times taller than wide (at the thumbnail's width). */
export const MAX_THUMBNAIL_ASPECT = 8;

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
 * thumbnails, and so do only images at most `MAX_THUMBNAIL_ASPECT` times taller than wide (null
 * otherwise: the image's own URL stands in).
 */
async function decodeAtLeast(bytes: Uint8Array, format: ImageFormat, width: number): Promise<Raster | null> {
  const size = imageDimensions(bytes, format);
  if (!size) return null;
  // Heights follow the width: a sliver 1 px wide and millions tall would decode to a sliver just as
  // tall. Such images get no thumbnails.
  if (scaledSize(size.width, size.height, width).height > MAX_THUMBNAIL_ASPECT * width) return null;
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
