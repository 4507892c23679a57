/**
 * Decoded pixels, row-major, top row first, `channels` bytes per pixel (3: RGB, 4: RGBA).
 * The thumbnail and re-orientation paths pass these between decoders, the resizer and the
 * encoder; decoders that can scale while decoding return the smaller raster directly.
 */
export interface Raster {
  width: number;
  height: number;
  channels: 3 | 4;
  pixels: Uint8Array;
}
