import { decodeBmpScaled } from "./bmp-decode-scaled";
import { decodeWithPhoton, encodeRaster } from "./encode";
import { ImageStructureError } from "./exif";
import type { ImageFormat } from "./formats";
import { imageDimensions } from "./formats";
import { checkGifFrames } from "./gif-frames";
import { decodeJpegScaled, type JpegScale, jpegScaleFor } from "./jpeg-decode-scaled";
import { decodePngScaled } from "./png-decode-scaled";
import type { Raster } from "./raster";
import { downscaleRaster } from "./resize";

/**
 * A thumbnail of width W fits in a box W wide and `MAX_THUMBNAIL_ASPECT` x W tall: a tall image
 * gets a narrower thumbnail, so no thumbnail (and no raster behind it) grows with the image's
 * height. Images too narrow for a box of 1 px get none.
 */
export const MAX_THUMBNAIL_ASPECT = 2;

/** Largest raster a JPEG is decoded to (RGB bytes): a smaller scale is taken past it. */
const JPEG_RASTER_BUDGET = 24 * 1024 * 1024;

/** One thumbnail, encoded. */
export interface Thumbnail {
  /** The width it was made for (its key); the image is narrower when the source is, or tall. */
  width: number;
  bytes: Uint8Array;
  contentType: string;
}

/** Width of the thumbnail for `box`: never wider than the image, never taller than the box. */
function fittedWidth(size: { width: number; height: number }, box: number): number {
  return Math.min(box, size.width, Math.floor((box * MAX_THUMBNAIL_ASPECT * size.width) / size.height));
}

function jpegScale(size: { width: number; height: number }, width: number): JpegScale {
  let scale = jpegScaleFor(size.width, width);
  while (scale < 8 && Math.ceil(size.width / scale) * Math.ceil(size.height / scale) * 3 > JPEG_RASTER_BUDGET)
    scale = (scale * 2) as JpegScale;
  return scale;
}

/**
 * The source decoded in full at about `width` pixels across, in bounded memory: JPEG with a
 * reduced IDCT (at no more than 24 MiB of pixels) after entropy-decoding every scan, PNG and BMP
 * while streaming their rows. GIF and WebP have no such decoder here: photon decodes them whole,
 * which `decodeWithPhoton` allows up to `PHOTON_MAX_PIXELS` (larger ones throw); it reads a GIF's
 * first frame only, so the LZW data of every frame is checked first (`checkGifFrames`). Throws when
 * the data cannot be decoded (`ImageStructureError`, or what a decoder raises on bad data).
 */
async function decodeFor(bytes: Uint8Array, format: ImageFormat, size: { width: number; height: number }, width: number): Promise<Raster> {
  switch (format) {
    case "jpeg":
      return downscaleRaster(decodeJpegScaled(bytes, jpegScale(size, width), { everyScan: true }), width);
    case "png":
      return decodePngScaled(bytes, width);
    case "bmp":
      return decodeBmpScaled(bytes, width);
    case "gif":
      checkGifFrames(bytes); // photon decodes the first frame only
      return downscaleRaster(decodeWithPhoton(bytes), width);
    case "webp":
      return downscaleRaster(decodeWithPhoton(bytes), width);
  }
}

/**
 * Decodes the image in full (so an image whose data is corrupt or truncated throws, whatever its
 * headers say) and makes a thumbnail for each of `widths`: JPEG when opaque, PNG when the image
 * has an alpha channel, each fitted in its box (`MAX_THUMBNAIL_ASPECT`). The source is decoded
 * once, for the largest, and each smaller thumbnail is averaged down from the previous one. A
 * sliver too narrow for the smallest box is decoded all the same and gets none (an empty list).
 */
export async function makeThumbnails(bytes: Uint8Array, format: ImageFormat, widths: readonly number[]): Promise<Thumbnail[]> {
  const size = imageDimensions(bytes, format);
  if (!size) throw new ImageStructureError(`${format.toUpperCase()}: no size in the header`);
  const boxes = [...widths].sort((a, b) => b - a);
  let raster = await decodeFor(bytes, format, size, Math.max(1, fittedWidth(size, boxes[0]!)));
  if (fittedWidth(size, boxes[boxes.length - 1]!) < 1) return [];
  const thumbnails: Thumbnail[] = [];
  for (const box of boxes) {
    raster = downscaleRaster(raster, fittedWidth(size, box));
    thumbnails.push({ width: box, ...encodeRaster(raster, raster.channels === 4 ? "png" : "jpeg") });
  }
  return thumbnails;
}
