import { describe, expect, it } from "vitest";
import { decodeWithPhoton, encodeRaster, PHOTON_MAX_PIXELS } from "../../../src/lib/images/encode";
import { ImageStructureError } from "../../../src/lib/images/exif";
import { sniffImageFormat } from "../../../src/lib/images/formats";
import { decodePngScaled } from "../../../src/lib/images/png-decode-scaled";
import { gifWithMetadata, pngImage, SMALL_PIXELS, simpleWebp, testPixel } from "../../support/image-fixtures";
import { buildPng, makeRaster, pixelAt } from "../../support/image-fixtures-raster";

/** 64x48 in four flat quadrants, so JPEG's losses stay small away from the edges. */
const QUADRANTS = [
  [220, 30, 40],
  [30, 200, 60],
  [40, 50, 210],
  [240, 230, 20],
];
const quadrant = (x: number, y: number) => QUADRANTS[(y < 24 ? 0 : 2) + (x < 32 ? 0 : 1)]!;
const near = (got: number[], want: number[], tolerance: number) =>
  got.every((v, i) => Math.abs(v - want[i]!) <= tolerance) || `${got} is not within ${tolerance} of ${want}`;

describe("encodeRaster", () => {
  it("writes a JPEG of the right size and colours", () => {
    const { bytes, contentType } = encodeRaster(makeRaster(64, 48, 3, quadrant), "jpeg");
    expect(contentType).toBe("image/jpeg");
    expect(sniffImageFormat(bytes)).toBe("jpeg");
    const back = decodeWithPhoton(bytes);
    expect(back).toMatchObject({ width: 64, height: 48, channels: 4 });
    for (const [x, y] of [
      [10, 10],
      [50, 10],
      [10, 40],
      [50, 40],
    ] as const) {
      expect(near(pixelAt(back, x, y), [...quadrant(x, y), 255], 8)).toBe(true);
    }
  });

  it("composites transparency on white for JPEG instead of letting it turn black", () => {
    const raster = makeRaster(32, 16, 4, (x) => (x < 16 ? [0, 0, 0, 0] : [255, 0, 0, 128]));
    const back = decodeWithPhoton(encodeRaster(raster, "jpeg", 95).bytes);
    expect(near(pixelAt(back, 4, 8), [255, 255, 255, 255], 6)).toBe(true);
    expect(near(pixelAt(back, 27, 8), [255, 127, 127, 255], 8)).toBe(true);
  });

  it("follows the quality setting", () => {
    const noisy = makeRaster(64, 64, 3, (x, y) => [(x * 37 + y * 11) & 255, (x * y) & 255, (x ^ y) * 4]);
    expect(encodeRaster(noisy, "jpeg", 30).bytes.length).toBeLessThan(encodeRaster(noisy, "jpeg", 95).bytes.length);
  });

  for (const format of ["png", "webp"] as const) {
    it(`writes ${format} losslessly, alpha included`, () => {
      const raster = makeRaster(20, 9, 4, (x, y) => [x * 12, y * 28, 255 - x * 5, x === 3 ? 0 : 255 - y * 20]);
      const { bytes, contentType } = encodeRaster(raster, format);
      expect(contentType).toBe(`image/${format}`);
      expect(sniffImageFormat(bytes)).toBe(format);
      expect(decodeWithPhoton(bytes)).toEqual(raster);
    });

    it(`expands RGB to opaque RGBA for ${format}`, () => {
      const raster = makeRaster(16, 8, 3, (x, y) => [...testPixel(x, y)]);
      const back = decodeWithPhoton(encodeRaster(raster, format).bytes);
      expect(back).toEqual(makeRaster(16, 8, 4, (x, y) => [...testPixel(x, y), 255]));
    });
  }

  it("writes PNGs that the streaming decoder reads back", async () => {
    const raster = makeRaster(30, 20, 4, (x, y) => [x * 8, y * 12, 100, 200]);
    expect(await decodePngScaled(encodeRaster(raster, "png").bytes, 100)).toEqual(raster);
  });
});

describe("decodeWithPhoton", () => {
  it("decodes a GIF's frame through its palette", () => {
    const out = decodeWithPhoton(gifWithMetadata());
    expect(out).toMatchObject({ width: 4, height: 2, channels: 4 });
    const palette = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
      [255, 255, 255],
    ];
    [0, 1, 2, 3, 3, 2, 1, 0].forEach((index, i) => expect(pixelAt(out, i % 4, i >> 2)).toEqual([...palette[index]!, 255]));
  });

  it("decodes a lossless WebP and a PNG exactly", async () => {
    const webp = decodeWithPhoton(simpleWebp());
    SMALL_PIXELS.forEach((p, i) => expect(pixelAt(webp, i % 4, i >> 2)).toEqual([...p, 255]));
    const png = decodeWithPhoton(await pngImage());
    expect(pixelAt(png, 5, 3)).toEqual([...testPixel(5, 3), 255]);
  });

  it("turns undecodable input into ImageStructureError, and photon keeps working afterwards", async () => {
    expect(() => decodeWithPhoton(new TextEncoder().encode("not an image at all"))).toThrow(ImageStructureError);
    const png = await pngImage();
    expect(() => decodeWithPhoton(png.subarray(0, 60))).toThrow(ImageStructureError);
    const gif = gifWithMetadata();
    expect(() => decodeWithPhoton(gif.subarray(0, gif.length - 8))).toThrow(ImageStructureError);
    expect(decodeWithPhoton(png)).toMatchObject({ width: 16, height: 8 });
  });

  it("refuses images above PHOTON_MAX_PIXELS from the header, before decoding", async () => {
    const side = Math.ceil(Math.sqrt(PHOTON_MAX_PIXELS)) + 1;
    // A uniform image is tiny when compressed; only its header matters here.
    const png = await buildPng({ width: side, height: side, colorType: 0, depth: 1, sample: () => [0], filter: () => 0, idatChunks: 1 });
    expect(() => decodeWithPhoton(png)).toThrow(/too large/);
    const justBelow = await buildPng({
      width: 1000,
      height: Math.floor(PHOTON_MAX_PIXELS / 1000),
      colorType: 0,
      depth: 1,
      sample: () => [1],
      filter: () => 0,
      idatChunks: 1,
    });
    expect(decodeWithPhoton(justBelow).width).toBe(1000);
  });
});
