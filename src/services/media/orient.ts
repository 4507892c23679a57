import { decodeWithPhoton, encodeRaster, PHOTON_MAX_PIXELS } from "../../lib/images/encode";
import type { ImageFormat } from "../../lib/images/formats";
import { type Orientation, orientJpeg } from "../../lib/images/jpeg-orient";
import { orientRaster } from "../../lib/images/resize";
import { ApiError } from "../../lib/problem";

// The EXIF orientation of an upload is read (and removed) by the sanitiser in the upload request;
// turning the pixels is CPU work (a 10 MP JPEG: ~1.3 s), so the request only checks that it can be
// done and records it, and the media job turns the pixels before it publishes the image
// (docs/storage.md, "Orientation").

/** The 422 of an upload whose orientation cannot be applied here. */
const cannotOrient = (reason: string) =>
  new ApiError(422, {
    code: "IMAGE_UNREADABLE",
    detail: `The image cannot be accepted: its EXIF orientation cannot be applied (${reason}). Rotate it before uploading.`,
  });

/** Width and height once turned upright: orientations 5 to 8 swap them. */
export function uprightSize(width: number, height: number, orientation: number): { width: number; height: number } {
  return orientation >= 5 ? { width: height, height: width } : { width, height };
}

/**
 * The upload request's check, without pixel work: JPEGs turn losslessly in the DCT domain in
 * bounded memory whatever their size; other formats are decoded, turned and re-encoded, which
 * only images small enough to decode whole in a Worker can afford (422 otherwise).
 */
export function assertOrientable(format: ImageFormat, width: number, height: number, orientation: number): void {
  if (orientation === 1 || format === "jpeg") return;
  const pixels = width * height;
  if (pixels > PHOTON_MAX_PIXELS) {
    throw cannotOrient(
      `turning a ${format.toUpperCase()} of ${pixels} pixels needs it decoded whole, which is done up to ${PHOTON_MAX_PIXELS} pixels`,
    );
  }
}

/**
 * The media job's pixel work: the sanitised bytes with `orientation` applied (the bytes
 * themselves for 1). Only PNG and WebP carry EXIF besides JPEG; GIF and BMP always come with 1.
 * Throws `ImageStructureError` when the data does not allow it.
 */
export function uprightBytes(bytes: Uint8Array, format: ImageFormat, orientation: number): Uint8Array {
  if (orientation === 1) return bytes;
  if (format === "jpeg") return orientJpeg(bytes, orientation as Orientation).bytes;
  const raster = orientRaster(decodeWithPhoton(bytes), orientation as Orientation);
  return encodeRaster(raster, format === "webp" ? "webp" : "png").bytes;
}
