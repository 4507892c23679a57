import { describe, expect, it } from "vitest";
import { decodeBmpScaled } from "../../../src/lib/images/bmp-decode-scaled";
import { ImageStructureError } from "../../../src/lib/images/exif";
import { checkBmp } from "../../../src/lib/images/sanitize-gif-bmp";
import { bmpImage, SMALL_PIXELS } from "../../support/image-fixtures";
import { type BmpSpec, buildBmp, makeRaster, pixelAt, referenceDownscale } from "../../support/image-fixtures-raster";

const W = 11; // odd, so rows carry padding at every bit count
const H = 5;

const palette = (n: number): [number, number, number][] =>
  Array.from({ length: n }, (_, i) => [(i * 41 + 3) & 255, (i * 97) & 255, 255 - ((i * 29) & 255)]);

const scale = (v: number, bits: number) => Math.round((v * 255) / ((1 << bits) - 1));

/** Decodes at full size after checking that the upload sanitizer accepts the file too. */
function decode(spec: BmpSpec, maxWidth = 1000) {
  const bmp = buildBmp(spec);
  expect(checkBmp(bmp).width).toBe(spec.width);
  return decodeBmpScaled(bmp, maxWidth);
}

describe("decodeBmpScaled at full size", () => {
  it("reads the existing 24-bit fixture both bottom-up and top-down", () => {
    for (const topDown of [false, true]) {
      const out = decodeBmpScaled(bmpImage(topDown), 100);
      expect(out).toMatchObject({ width: 4, height: 2, channels: 3 });
      SMALL_PIXELS.forEach((p, i) => expect(pixelAt(out, i % 4, i >> 2)).toEqual([...p]));
    }
  });

  for (const bitCount of [1, 4, 8] as const) {
    for (const headerSize of [40, 12] as const) {
      it(`looks up ${bitCount}-bit palette indices (${headerSize}-byte header)`, () => {
        const pal = palette(1 << bitCount);
        const index = (x: number, y: number) => (x * 3 + y * 7) % (1 << bitCount);
        const spec: BmpSpec = { width: W, height: H, bitCount, value: index, palette: pal, headerSize };
        expect(decode(spec)).toEqual(makeRaster(W, H, 3, (x, y) => pal[index(x, y)]!));
      });
    }
  }

  it("shows indices past a short palette as black", () => {
    const pal = palette(2);
    const out = decode({ width: 4, height: 1, bitCount: 8, value: (x) => x, palette: pal });
    expect([0, 1, 2, 3].map((x) => pixelAt(out, x, 0))).toEqual([pal[0], pal[1], [0, 0, 0], [0, 0, 0]]);
  });

  for (const topDown of [false, true]) {
    it(`reads 24-bit rows ${topDown ? "top-down" : "bottom-up"}`, () => {
      const rgb = (x: number, y: number) => [x * 20, y * 50, 255 - x * 10 - y];
      const out = decode({
        width: W,
        height: H,
        bitCount: 24,
        topDown,
        value: (x, y) => (rgb(x, y)[0]! << 16) | (rgb(x, y)[1]! << 8) | rgb(x, y)[2]!,
      });
      expect(out).toEqual(makeRaster(W, H, 3, rgb));
    });
  }

  it("reads 16-bit pixels as 5-5-5 without bit fields", () => {
    const v = (x: number, y: number) => ((x * 3) << 10) | ((y * 7) << 5) | (31 - x);
    const out = decode({ width: W, height: H, bitCount: 16, value: v });
    expect(out).toEqual(makeRaster(W, H, 3, (x, y) => [scale(x * 3, 5), scale(y * 7, 5), scale(31 - x, 5)]));
    expect(pixelAt(decode({ width: 1, height: 1, bitCount: 16, value: () => 0x7fff }), 0, 0)).toEqual([255, 255, 255]);
  });

  it("reads 16-bit 5-6-5 bit fields", () => {
    const v = (x: number, y: number) => ((x * 2) << 11) | ((y * 13) << 5) | (x + y);
    const out = decode({ width: W, height: H, bitCount: 16, value: v, compression: 3, masks: [0xf800, 0x07e0, 0x001f, 0] });
    expect(out).toEqual(makeRaster(W, H, 3, (x, y) => [scale(x * 2, 5), scale(y * 13, 6), scale(x + y, 5)]));
  });

  it("ignores the fourth byte of 32-bit pixels without an alpha mask", () => {
    const v = (x: number, y: number) => (0x80 << 24) | ((x * 20) << 16) | ((y * 40) << 8) | (x + y);
    expect(decode({ width: W, height: H, bitCount: 32, value: v })).toEqual(makeRaster(W, H, 3, (x, y) => [x * 20, y * 40, x + y]));
    const fields = decode({ width: W, height: H, bitCount: 32, value: v, compression: 3, masks: [0xff0000, 0xff00, 0xff, 0] });
    expect(fields.channels).toBe(3);
  });

  for (const headerSize of [56, 108, 124] as const) {
    it(`reads 32-bit bit fields with an alpha mask as RGBA (${headerSize}-byte header)`, () => {
      // Fields in an unusual order: alpha in the low byte, blue on top.
      const v = (x: number, y: number) => ((x * 9) << 24) | ((y * 30) << 16) | ((x * 20) << 8) | (x * y * 4);
      const masks: [number, number, number, number] = [0x0000ff00, 0x00ff0000, 0xff000000, 0x000000ff];
      const out = decode({ width: W, height: H, bitCount: 32, value: v, compression: 3, masks, headerSize });
      expect(out).toEqual(makeRaster(W, H, 4, (x, y) => [x * 20, y * 30, x * 9, x * y * 4]));
    });
  }

  it("scales fields wider than 8 bits from their top bits (10-10-10 with 2-bit alpha)", () => {
    const v = () => (3 << 30) | (1023 << 20) | (512 << 10) | 1;
    const masks: [number, number, number, number] = [0x3ff00000, 0x000ffc00, 0x000003ff, 0xc0000000];
    const out = decode({ width: 1, height: 1, bitCount: 32, value: v, compression: 3, masks, headerSize: 124 });
    expect(pixelAt(out, 0, 0)).toEqual([255, 128, 0, 255]);
  });
});

describe("decodeBmpScaled: downscaling while reading", () => {
  it("follows the box mapping for uneven ratios", () => {
    const v = (x: number, y: number) => ((x * 23) << 16) | ((y * 51) << 8) | ((x * y * 5) & 255);
    for (const topDown of [false, true]) {
      const spec: BmpSpec = { width: 23, height: 13, bitCount: 24, value: v, topDown };
      const full = decode(spec);
      expect(decode(spec, 7)).toEqual(referenceDownscale(full, 7, 4));
    }
  });

  it("averages RGBA with alpha weights", () => {
    const masks: [number, number, number, number] = [0xff0000, 0xff00, 0xff, 0xff000000];
    const v = (x: number) => (x === 0 ? 0xff0000ff : 0x00ff0000); // opaque blue, transparent red
    const out = decode({ width: 2, height: 1, bitCount: 32, value: v, compression: 3, masks, headerSize: 108 }, 1);
    expect(pixelAt(out, 0, 0)).toEqual([0, 0, 255, 128]);
  });

  it("averages a 4-bit image down to one pixel", () => {
    const pal: [number, number, number][] = [
      [0, 0, 0],
      [200, 100, 50],
    ];
    const out = decode({ width: 4, height: 2, bitCount: 4, value: (x) => (x < 3 ? 1 : 0), palette: pal }, 1);
    expect(out).toMatchObject({ width: 1, height: 1 });
    expect(pixelAt(out, 0, 0)).toEqual([150, 75, Math.round(37.5)]);
  });
});

describe("decodeBmpScaled: unsupported and broken files", () => {
  const throws = (bmp: Uint8Array, message: RegExp) => {
    expect(() => decodeBmpScaled(bmp, 100)).toThrow(ImageStructureError);
    expect(() => decodeBmpScaled(bmp, 100)).toThrow(message);
  };

  it("refuses RLE and other compressions that checkBmp lets through", () => {
    for (const [bitCount, compression] of [
      [8, 1],
      [4, 2],
    ] as const) {
      const bmp = buildBmp({ width: 4, height: 2, bitCount, value: () => 0, palette: palette(4), compression });
      expect(checkBmp(bmp).width).toBe(4);
      throws(bmp, /RLE/);
    }
    throws(buildBmp({ width: 4, height: 2, bitCount: 24, value: () => 0, compression: 4 }), /compression type 4/);
    throws(buildBmp({ width: 4, height: 2, bitCount: 8, value: () => 0, palette: palette(4), compression: 3 }), /compression type 3/);
  });

  it("refuses truncated pixel data, bad signatures and bad headers", () => {
    const bmp = buildBmp({ width: 4, height: 2, bitCount: 24, value: () => 0 });
    throws(bmp.subarray(0, bmp.length - 1), /truncated/);
    throws(Uint8Array.from([0x42, 0x4e, ...bmp.subarray(2)]), /signature/);
    const badHeader = bmp.slice();
    badHeader[14] = 41;
    throws(badHeader, /info header/);
    const badBits = bmp.slice();
    badBits[28] = 2;
    throws(badBits, /bit count/);
  });

  it("rejects a maxWidth that is not a positive integer", () => {
    expect(() => decodeBmpScaled(bmpImage(), 0)).toThrow(RangeError);
  });
});
