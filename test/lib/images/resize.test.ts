import { describe, expect, it } from "vitest";
import { AreaAccumulator, downscaleRaster, type Orientation, orientRaster, scaledSize } from "../../../src/lib/images/resize";
import { makeRaster, pixelAt, referenceDownscale } from "../../support/image-fixtures-raster";

describe("scaledSize", () => {
  it("keeps the aspect ratio, never enlarges, and keeps at least one row", () => {
    expect(scaledSize(6000, 4000, 1600)).toEqual({ width: 1600, height: 1067 });
    expect(scaledSize(800, 600, 1600)).toEqual({ width: 800, height: 600 });
    expect(scaledSize(100, 3, 10)).toEqual({ width: 10, height: 1 });
    expect(() => scaledSize(10, 10, 0)).toThrow(RangeError);
    expect(() => scaledSize(10, 10, 1.5)).toThrow(RangeError);
  });
});

describe("downscaleRaster", () => {
  const rgb = makeRaster(4, 2, 3, (x, y) => [x * 10 + y, 100 + x, 200 - y * 7]);

  it("returns the input itself when it is narrow enough", () => {
    expect(downscaleRaster(rgb, 4)).toBe(rgb);
    expect(downscaleRaster(rgb, 1000)).toBe(rgb);
  });

  it("averages 2x2 blocks", () => {
    const out = downscaleRaster(rgb, 2);
    expect(out).toMatchObject({ width: 2, height: 1, channels: 3 });
    // Block 1: x 0-1, y 0-1: red 0,10,1,11; green 100,101,100,101; blue 200,200,193,193.
    expect(pixelAt(out, 0, 0)).toEqual([Math.round(22 / 4), Math.round(402 / 4), Math.round(786 / 4)]);
    expect(pixelAt(out, 1, 0)).toEqual([Math.round(102 / 4), Math.round(410 / 4), Math.round(786 / 4)]);
  });

  it("matches the plain reference for uneven ratios, RGB and RGBA", () => {
    for (const channels of [3, 4] as const) {
      const src = makeRaster(31, 19, channels, (x, y) =>
        [(x * 17 + y) & 255, (y * 29) & 255, (x * y) & 255, ((x + y) * 9) & 255].slice(0, channels),
      );
      for (const maxWidth of [1, 2, 7, 16, 30]) {
        const size = scaledSize(31, 19, maxWidth);
        expect(downscaleRaster(src, maxWidth), `${channels} channels to ${maxWidth}`).toEqual(
          referenceDownscale(src, size.width, size.height),
        );
      }
    }
  });

  it("weights colours by alpha and leaves fully transparent areas black and transparent", () => {
    const src = makeRaster(4, 1, 4, (x) => (x === 0 ? [255, 255, 255, 51] : x === 1 ? [0, 0, 0, 0] : [9, 9, 9, 0]));
    const out = downscaleRaster(src, 2);
    expect(pixelAt(out, 0, 0)).toEqual([255, 255, 255, Math.round(51 / 2)]);
    expect(pixelAt(out, 1, 0)).toEqual([0, 0, 0, 0]);
  });
});

describe("AreaAccumulator", () => {
  it("gives the same result from segments in any order as from whole rows", () => {
    const src = makeRaster(20, 10, 4, (x, y) => [x * 12, y * 25, (x ^ y) * 8, 100 + x + y]);
    const want = downscaleRaster(src, 6);
    const acc = new AreaAccumulator(20, 10, want.width, want.height, 4, "any");
    // Even columns of every row, bottom row first, then the odd columns, like interlace passes.
    for (const start of [0, 1]) {
      for (let y = 9; y >= 0; y--) {
        const px = new Uint8Array(10 * 4);
        for (let i = 0; i < 10; i++) px.set(pixelAt(src, start + 2 * i, y), i * 4);
        acc.add(y, px, 10, start, 2);
      }
    }
    expect(acc.finish()).toEqual(want);
  });

  it("stays exact when a destination pixel averages millions of source pixels", () => {
    // 2000x1000 into 1x1 in "any" mode: Float32 sums would lose the low bits long before the end.
    const acc = new AreaAccumulator(2000, 1000, 1, 1, 4, "any");
    const row = new Uint8Array(2000 * 4);
    for (let x = 0; x < 2000; x++) row.set(x % 2 ? [201, 13, 99, 77] : [1, 3, 251, 255], x * 4);
    for (let y = 0; y < 1000; y++) acc.add(y, row, 2000);
    const a = (77 + 255) / 2;
    const mean = (p: number, q: number) => Math.round((p * 77 + q * 255) / (77 + 255));
    expect(pixelAt(acc.finish(), 0, 0)).toEqual([mean(201, 1), mean(13, 3), mean(99, 251), Math.round(a)]);
  });

  it("refuses to enlarge", () => {
    expect(() => new AreaAccumulator(4, 4, 5, 4, 3, "rows")).toThrow(RangeError);
  });
});

describe("orientRaster", () => {
  // 3x2 source, one label per pixel:  a b c / d e f
  const labels = "abcdef";
  const src = makeRaster(3, 2, 3, (x, y) => [labels.charCodeAt(y * 3 + x), x, y]);
  const grid = (r: ReturnType<typeof orientRaster>) =>
    Array.from({ length: r.height }, (_, y) =>
      Array.from({ length: r.width }, (_, x) => String.fromCharCode(pixelAt(r, x, y)[0]!)).join(""),
    ).join("/");

  const cases: [Orientation, string][] = [
    [1, "abc/def"],
    [2, "cba/fed"], // mirrored horizontally
    [3, "fed/cba"], // rotated 180
    [4, "def/abc"], // mirrored vertically
    [5, "ad/be/cf"], // transposed
    [6, "da/eb/fc"], // rotated 90 clockwise
    [7, "fc/eb/da"], // transverse
    [8, "cf/be/ad"], // rotated 270 clockwise
  ];
  for (const [orientation, want] of cases) {
    it(`orientation ${orientation} gives ${want}`, () => {
      const out = orientRaster(src, orientation);
      expect(grid(out)).toBe(want);
      expect(out.pixels.length).toBe(src.pixels.length);
    });
  }

  it("returns the input for orientation 1 and keeps every channel of RGBA pixels", () => {
    expect(orientRaster(src, 1)).toBe(src);
    const rgba = makeRaster(2, 1, 4, (x) => [x, 10 + x, 20 + x, 30 + x]);
    const turned = orientRaster(rgba, 6);
    expect(turned).toMatchObject({ width: 1, height: 2, channels: 4 });
    expect([pixelAt(turned, 0, 0), pixelAt(turned, 0, 1)]).toEqual([
      [0, 10, 20, 30],
      [1, 11, 21, 31],
    ]);
  });

  it("undoes 6 with 8, and 5 and 7 are their own inverses", () => {
    const big = makeRaster(7, 4, 3, (x, y) => [x, y, x * y]);
    expect(orientRaster(orientRaster(big, 6), 8)).toEqual(big);
    expect(orientRaster(orientRaster(big, 5), 5)).toEqual(big);
    expect(orientRaster(orientRaster(big, 7), 7)).toEqual(big);
  });
});
