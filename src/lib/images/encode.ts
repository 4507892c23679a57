/**
 * Encoding rasters and whole-image decoding through photon (Rust image crate in Wasm). Photon
 * holds a whole image, several copies at a time, in Wasm memory that never shrinks: it is for
 * thumbnails and for small images of the formats without a streaming decoder here (GIF, WebP).
 */
import { PhotonImage } from "@cf-wasm/photon";
import { ImageStructureError } from "./exif";
import { IMAGE_TYPES, imageDimensions, sniffImageFormat } from "./formats";
import type { Raster } from "./raster";

/**
 * Largest image photon may decode and then re-encode at full size while staying under ~64 MB.
 * Measured with photon's Node build (same Wasm) as the growth of heapUsed + external (which
 * includes the Wasm memory and array buffers), per pixel, at 1.5-6 MP:
 * - decode to RGBA, pixels copied out: PNG 16, WebP 19, GIF 17, JPEG 17 bytes;
 * - encode from RGBA: JPEG 12-14, lossless WebP 17-24, PNG 21-35 bytes (the most for noise);
 * - decode + encode: 17-26 bytes for smooth pictures, up to 38-40 for noise re-encoded as PNG
 *   (57 MB at 1.5 MP, 80 MB at 2 MP).
 * Wasm memory never shrinks, so a Worker that used photon keeps that peak for its lifetime.
 */
export const PHOTON_MAX_PIXELS = 1_500_000;

export type EncodedFormat = "jpeg" | "png" | "webp";

/** RGBA copy of the raster; `flatten` composites it on white, for formats without alpha. */
function toRgba(raster: Raster, flatten: boolean): Uint8Array {
  const { width, height, channels, pixels } = raster;
  if (channels === 4 && !flatten) return pixels;
  const n = width * height;
  const out = new Uint8Array(n * 4);
  for (let i = 0, s = 0, o = 0; i < n; i++, s += channels, o += 4) {
    const a = channels === 4 ? pixels[s + 3]! : 255;
    if (a === 255) {
      out[o] = pixels[s]!;
      out[o + 1] = pixels[s + 1]!;
      out[o + 2] = pixels[s + 2]!;
    } else {
      // JPEG has no alpha: photon would keep the colour of transparent pixels, often black.
      const white = 255 * (255 - a);
      out[o] = Math.round((pixels[s]! * a + white) / 255);
      out[o + 1] = Math.round((pixels[s + 1]! * a + white) / 255);
      out[o + 2] = Math.round((pixels[s + 2]! * a + white) / 255);
    }
    out[o + 3] = 255;
  }
  return out;
}

/**
 * Encodes a raster as JPEG (`quality` 1-100; alpha composited on white), PNG or WebP (photon
 * writes both losslessly, as RGBA, and ignores `quality`).
 */
export function encodeRaster(raster: Raster, format: EncodedFormat, quality = 82): { bytes: Uint8Array; contentType: string } {
  const image = new PhotonImage(toRgba(raster, format === "jpeg"), raster.width, raster.height);
  try {
    const bytes =
      format === "jpeg"
        ? image.get_bytes_jpeg(Math.min(100, Math.max(1, Math.round(quality))))
        : format === "png"
          ? image.get_bytes()
          : image.get_bytes_webp();
    return { bytes, contentType: IMAGE_TYPES[format].mime };
  } finally {
    image.free();
  }
}

/**
 * Decodes any supported format whole as RGBA (a GIF's first frame; EXIF orientation is not
 * applied). Refuses images over `PHOTON_MAX_PIXELS` by their header before decoding, and turns
 * photon's failures into `ImageStructureError`.
 */
export function decodeWithPhoton(bytes: Uint8Array): Raster {
  const format = sniffImageFormat(bytes.subarray(0, 16));
  const size = format && imageDimensions(bytes, format);
  if (!size) throw new ImageStructureError("not an image photon can decode");
  if (size.width * size.height > PHOTON_MAX_PIXELS) {
    throw new ImageStructureError(`${size.width}x${size.height} is too large to decode whole (limit ${PHOTON_MAX_PIXELS} pixels)`);
  }
  let image: PhotonImage;
  try {
    image = PhotonImage.new_from_byteslice(bytes);
  } catch (e) {
    throw new ImageStructureError(`${format}: photon could not decode it (${e instanceof Error ? e.message : String(e)})`);
  }
  try {
    const width = image.get_width();
    const height = image.get_height();
    const pixels = image.get_raw_pixels();
    if (pixels.length !== width * height * 4)
      throw new ImageStructureError(`${format}: photon returned ${pixels.length} bytes for ${width}x${height}`);
    return { width, height, channels: 4, pixels };
  } finally {
    image.free();
  }
}
