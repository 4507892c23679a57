import { describe, expect, it } from "vitest";
import { IMAGE_FORMATS, IMAGE_TYPES, imageDimensions, sniffImageFormat } from "../../../src/lib/images/formats";
import {
  bmpImage,
  concat,
  encodeJpeg,
  gifWithMetadata,
  pngImage,
  riff,
  riffChunk,
  simpleWebp,
  testPixel,
  webpWithMetadata,
} from "../../support/image-fixtures";

const text = (s: string) => new TextEncoder().encode(s);

/** A lossy VP8 key-frame header (RFC 6386 9.1) for 320x240; enough for the size, not for decoding. */
const vp8Webp = () => riff([riffChunk("VP8 ", Uint8Array.from([0x50, 0x09, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x01, 0xf0, 0x00, 0, 0]))]);

describe("image types", () => {
  it("lists MIME types and extensions per format", () => {
    expect(IMAGE_FORMATS).toEqual(["jpeg", "png", "gif", "webp", "bmp"]);
    expect(IMAGE_TYPES).toEqual({
      jpeg: { mime: "image/jpeg", extensions: ["jpg", "jpeg"] },
      png: { mime: "image/png", extensions: ["png"] },
      gif: { mime: "image/gif", extensions: ["gif"] },
      webp: { mime: "image/webp", extensions: ["webp"] },
      bmp: { mime: "image/bmp", extensions: ["bmp"] },
    });
  });
});

describe("sniffImageFormat", () => {
  it("recognises each format from its first 16 bytes", async () => {
    const files = {
      jpeg: encodeJpeg(16, 8, testPixel),
      png: await pngImage(),
      gif: gifWithMetadata(),
      webp: webpWithMetadata(),
      bmp: bmpImage(),
    } as const;
    for (const [format, bytes] of Object.entries(files)) expect(sniffImageFormat(bytes.subarray(0, 16))).toBe(format);
    expect(sniffImageFormat(concat(text("GIF87a"), new Uint8Array(10)))).toBe("gif");
  });

  it("reports a PNG named .jpg as png, so the caller's comparison fails", async () => {
    const format = sniffImageFormat((await pngImage()).subarray(0, 16));
    expect(format).toBe("png");
    expect(IMAGE_TYPES[format!].extensions).not.toContain("jpg");
    expect(IMAGE_TYPES[format!].mime).not.toBe("image/jpeg");
  });

  it.each([
    ["empty", new Uint8Array(0)],
    ["HTML", text("<!doctype html><html><script>")],
    ["ZIP", Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0])],
    ["text starting with BM", text("BMW owners club, page 1")],
    ["RIFF that is not WebP", text("RIFF\x10\0\0\0WAVEfmt ")],
    ["two JPEG bytes", Uint8Array.from([0xff, 0xd8])],
    ["PNG signature cut short", Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a])],
  ])("returns null for %s", (_name, bytes) => {
    expect(sniffImageFormat(bytes)).toBeNull();
  });
});

describe("imageDimensions", () => {
  it("reads JPEG sizes from SOF0 and SOF2", () => {
    expect(imageDimensions(encodeJpeg(16, 8, testPixel), "jpeg")).toEqual({ width: 16, height: 8 });
    expect(imageDimensions(encodeJpeg(13, 21, testPixel, { progressive: true }), "jpeg")).toEqual({ width: 13, height: 21 });
  });

  it("reads PNG, GIF and BMP sizes (BMP top-down height as its absolute value)", async () => {
    expect(imageDimensions(await pngImage(), "png")).toEqual({ width: 16, height: 8 });
    expect(imageDimensions(gifWithMetadata(), "gif")).toEqual({ width: 4, height: 2 });
    expect(imageDimensions(bmpImage(), "bmp")).toEqual({ width: 4, height: 2 });
    expect(imageDimensions(bmpImage(true), "bmp")).toEqual({ width: 4, height: 2 });
  });

  it("reads WebP sizes from VP8X, VP8L and VP8", () => {
    expect(imageDimensions(webpWithMetadata(), "webp")).toEqual({ width: 4, height: 2 });
    expect(imageDimensions(simpleWebp(), "webp")).toEqual({ width: 4, height: 2 });
    expect(imageDimensions(vp8Webp(), "webp")).toEqual({ width: 320, height: 240 });
  });

  it("returns null for truncated or mismatched structures", async () => {
    const jpeg = encodeJpeg(16, 8, testPixel);
    expect(imageDimensions(jpeg.subarray(0, 100), "jpeg")).toBeNull(); // cut before SOF0
    expect(imageDimensions((await pngImage()).subarray(0, 20), "png")).toBeNull();
    expect(imageDimensions(gifWithMetadata().subarray(0, 8), "gif")).toBeNull();
    expect(imageDimensions(webpWithMetadata().subarray(0, 22), "webp")).toBeNull();
    expect(imageDimensions(bmpImage().subarray(0, 20), "bmp")).toBeNull();
    expect(imageDimensions(jpeg, "png")).toBeNull();
    const zeroWidth = bmpImage();
    new DataView(zeroWidth.buffer).setInt32(18, 0, true);
    expect(imageDimensions(zeroWidth, "bmp")).toBeNull();
  });
});
