import { decodeWithPhoton, encodeRaster, PHOTON_MAX_PIXELS } from "../lib/images/encode";
import { ImageStructureError } from "../lib/images/exif";
import { type Orientation, orientJpeg } from "../lib/images/jpeg-orient";
import { orientRaster } from "../lib/images/resize";
import type { SanitizedImage } from "../lib/images/sanitized-image";
import { ApiError } from "../lib/problem";

/** An image with its pixels upright, as it will be stored and served. */
export interface UprightImage {
  bytes: Uint8Array;
  width: number;
  height: number;
}

const cannotOrient = (reason: string) =>
  new ApiError(422, {
    code: "IMAGE_UNREADABLE",
    detail: `The image cannot be accepted: its EXIF orientation cannot be applied (${reason}). Rotate it before uploading.`,
  });

/**
 * Applies the EXIF orientation the sanitiser read (and removed): JPEGs losslessly in the DCT
 * domain, in bounded memory whatever their size; other formats by decoding, turning and
 * re-encoding, which only images small enough to decode whole in a Worker can afford.
 */
export function uprightImage(image: SanitizedImage): UprightImage {
  const orientation = image.orientation as Orientation;
  if (orientation === 1) return { bytes: image.bytes, width: image.width, height: image.height };
  if (image.format === "jpeg") {
    try {
      return orientJpeg(image.bytes, orientation);
    } catch (error) {
      if (error instanceof ImageStructureError) throw cannotOrient(error.message);
      throw error;
    }
  }
  // Only PNG and WebP carry EXIF besides JPEG; GIF and BMP always come with orientation 1.
  const pixels = image.width * image.height;
  if (pixels > PHOTON_MAX_PIXELS) {
    throw cannotOrient(`turning a ${image.format.toUpperCase()} of ${pixels} pixels needs it decoded whole, which is done up to ${PHOTON_MAX_PIXELS} pixels`);
  }
  try {
    const raster = orientRaster(decodeWithPhoton(image.bytes), orientation);
    const encoded = encodeRaster(raster, image.format === "webp" ? "webp" : "png");
    return { bytes: encoded.bytes, width: raster.width, height: raster.height };
  } catch (error) {
    if (error instanceof ImageStructureError) throw cannotOrient(error.message);
    throw error;
  }
}
