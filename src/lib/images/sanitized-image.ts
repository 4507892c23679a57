import type { ImageFormat } from "./formats";

/** What sanitising an image gives (src/lib/images/sanitize.ts); each format's sanitiser gives all of it but the format. */
export interface SanitizedImage {
  /** The image with metadata reduced; pixels untouched. The input array itself when nothing was removed. */
  bytes: Uint8Array;
  format: ImageFormat;
  /** As stored, before orientation is applied. */
  width: number;
  height: number;
  /** 1..8 from the EXIF (1 if none); the caller rotates pixels. */
  orientation: number;
  /** The kept EXIF values. */
  metadata: Record<string, string | number>;
}
