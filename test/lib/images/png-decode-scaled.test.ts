import { describe, expect, it } from "vitest";
import { ImageStructureError } from "../../../src/lib/images/exif";
import { decodePngScaled } from "../../../src/lib/images/png-decode-scaled";
import type { Raster } from "../../../src/lib/images/raster";
import { concat, deflate, pngChunk, pngImage, testPixel } from "../../support/image-fixtures";
import {
  buildPng,
  makeRaster,
  type PngColorType,
  type PngSpec,
  pixelAt,
  pngScanlines,
  referenceDownscale,
} from "../../support/image-fixtures-raster";

const W = 13;
const H = 7;
const COMBOS: [PngColorType, PngSpec["depth"]][] = [
  [0, 1],
  [0, 2],
  [0, 4],
  [0, 8],
  [0, 16],
  [2, 8],
  [2, 16],
  [3, 1],
  [3, 2],
  [3, 4],
  [3, 8],
  [4, 8],
  [4, 16],
  [6, 8],
  [6, 16],
];
const SAMPLES: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Hashed samples over the whole range of the depth: irregular enough that the Paeth predictor
 * meets all of its tie cases, which smooth gradients never produce.
 */
const sampler = (colorType: PngColorType, depth: number) => (x: number, y: number) =>
  Array.from({ length: SAMPLES[colorType] }, (_, c) => {
    let h = Math.imul(x + 1, 0x9e3779b1) ^ Math.imul(y + 7, 0x85ebca77) ^ Math.imul(c + 3, 0xc2b2ae3d);
    h ^= h >>> 15;
    return (h >>> 8) % (1 << depth);
  });

const palette = (n: number): [number, number, number][] =>
  Array.from({ length: n }, (_, i) => [(i * 37) & 255, (i * 91 + 7) & 255, 255 - ((i * 53) & 255)]);

/** The 8-bit value a decoder must produce for a sample (PNG spec 13.12: scale to 8 bits, rounding). */
const to8 = (v: number, depth: number) => (depth === 16 ? Math.round(v / 257) : depth === 8 ? v : (v * 255) / ((1 << depth) - 1));

/** What the spec's image must decode to, computed directly from its samples. */
function expected(spec: PngSpec): Raster {
  const { colorType: ct, depth } = spec;
  const alpha = ct === 4 || ct === 6 || !!spec.trns;
  const keyOf = (i: number) => (spec.trns!.length >= 2 * i + 2 ? (spec.trns![2 * i]! << 8) | spec.trns![2 * i + 1]! : -1);
  return makeRaster(spec.width, spec.height, alpha ? 4 : 3, (x, y) => {
    const s = spec.sample(x, y);
    if (ct === 3) {
      const rgb = spec.palette![s[0]!]!;
      return alpha ? [...rgb, s[0]! < spec.trns!.length ? spec.trns![s[0]!]! : 255] : rgb;
    }
    const rgb = ct === 0 || ct === 4 ? [s[0]!, s[0]!, s[0]!] : s.slice(0, 3);
    const out = rgb.map((v) => to8(v, depth));
    if (ct === 4) return [...out, to8(s[1]!, depth)];
    if (ct === 6) return [...out, to8(s[3]!, depth)];
    if (!alpha) return out;
    const transparent = ct === 0 ? s[0] === keyOf(0) : s.every((v, i) => v === keyOf(i));
    return [...out, transparent ? 0 : 255];
  });
}

function spec(colorType: PngColorType, depth: PngSpec["depth"], extra: Partial<PngSpec> = {}): PngSpec {
  return {
    width: W,
    height: H,
    colorType,
    depth,
    sample: sampler(colorType, depth),
    ...(colorType === 3 ? { palette: palette(1 << depth) } : {}),
    ...extra,
  };
}

const decode = async (s: PngSpec, maxWidth = 10_000) => decodePngScaled(await buildPng(s), maxWidth);
const rejects = async (bytes: Uint8Array | Promise<Uint8Array>, message?: RegExp) => {
  const result = decodePngScaled(await bytes, 100);
  await expect(result).rejects.toThrow(ImageStructureError);
  if (message) await expect(result).rejects.toThrow(message);
};

describe("decodePngScaled at full size", () => {
  for (const [ct, depth] of COMBOS) {
    it(`decodes colour type ${ct} at ${depth} bits exactly, every filter`, async () => {
      const s = spec(ct, depth);
      expect(await decode(s)).toEqual(expected(s));
    });
  }

  for (const filter of [0, 1, 2, 3, 4]) {
    for (const [ct, depth] of [
      [2, 8],
      [0, 2],
      [6, 16],
    ] as const) {
      it(`undoes filter ${filter} alone (colour type ${ct}, ${depth} bits)`, async () => {
        const s = spec(ct, depth, { width: 40, height: 24, filter: () => filter });
        expect(await decode(s)).toEqual(expected(s));
      });
    }
  }

  it("scales sub-byte and 16-bit samples to 8 bits with rounding", async () => {
    const values = [
      [1, 1, 255],
      [2, 2, 170],
      [4, 9, 153],
      [16, 0x1234, 18],
      [16, 0x8100, 128],
      [16, 0x8101, 129],
      [16, 0xffff, 255],
    ] as const;
    for (const [depth, v, want] of values) {
      const out = await decode({ width: 1, height: 1, colorType: 0, depth, sample: () => [v] });
      expect(pixelAt(out, 0, 0), `${depth}-bit ${v}`).toEqual([want, want, want]);
    }
  });

  it("reads the existing 16x8 RGB fixture (two IDAT chunks)", async () => {
    const out = await decodePngScaled(await pngImage(), 100);
    expect(out).toMatchObject({ width: 16, height: 8, channels: 3 });
    for (let y = 0; y < 8; y++) for (let x = 0; x < 16; x++) expect(pixelAt(out, x, y)).toEqual(testPixel(x, y));
  });

  for (const depth of [1, 2, 4, 8] as const) {
    it(`applies tRNS to a ${depth}-bit palette (entries past tRNS stay opaque)`, async () => {
      const base = sampler(3, depth);
      const sample = (x: number, y: number) => (x < 2 && y === 0 ? [x] : base(x, y)); // indices 0 and 1 appear
      const s = spec(3, depth, { trns: [0, 128, 255].slice(0, Math.min(3, 1 << depth)), sample });
      const out = await decode(s);
      expect(out.channels).toBe(4);
      expect(out).toEqual(expected(s));
      expect(pixelAt(out, 0, 0)[3]).toBe(0);
      expect(pixelAt(out, 1, 0)[3]).toBe(128);
    });
  }

  for (const [ct, depth, trns] of [
    [0, 8, [0, 20]],
    [0, 16, [0x27, 0x17]],
    [0, 2, [0, 3]],
    [2, 8, [0, 0, 0, 5, 0, 10]],
    [2, 16, [0, 0, 0x10, 0x07, 0x20, 0x0e]],
  ] as const) {
    it(`turns the tRNS colour key transparent (colour type ${ct}, ${depth} bits)`, async () => {
      const key = ct === 0 ? [(trns[0] << 8) | trns[1]] : [0, 1, 2].map((i) => (trns[2 * i]! << 8) | trns[2 * i + 1]!);
      // Pixel (1, 1) carries the key; the rest come from the sampler.
      const base = sampler(ct, depth);
      const s = spec(ct, depth, { trns: [...trns], sample: (x, y) => (x === 1 && y === 1 ? key : base(x, y)) });
      const out = await decode(s);
      expect(out).toEqual(expected(s));
      expect(pixelAt(out, 1, 1)[3]).toBe(0);
      expect(out.pixels.some((v, i) => i % 4 === 3 && v === 255)).toBe(true);
    });
  }

  it("returns RGB for a palette image without tRNS", async () => {
    const s = spec(3, 4);
    expect((await decode(s)).channels).toBe(3);
  });
});

describe("decodePngScaled: Adam7", () => {
  for (const [w, h] of [
    [1, 1],
    [3, 2],
    [5, 5],
    [13, 7],
    [17, 9],
    [2, 11],
  ]) {
    for (const [ct, depth] of [
      [2, 8],
      [0, 1],
      [3, 4],
      [6, 16],
    ] as const) {
      it(`${w}x${h}, colour type ${ct} at ${depth} bits: same pixels as the plain image`, async () => {
        const s = spec(ct, depth, { width: w, height: h, interlaced: true });
        expect(await decode(s)).toEqual(expected(s));
      });
    }
  }

  it("downscales passes into the same result as the plain image", async () => {
    for (const [ct, depth] of [
      [2, 8],
      [6, 8],
      [4, 16],
    ] as const) {
      const plain = spec(ct, depth, { width: 37, height: 23 });
      const want = await decode(plain, 9);
      expect(await decode({ ...plain, interlaced: true }, 9)).toEqual(want);
      expect(want).toEqual(referenceDownscale(expected(plain), 9, 6));
    }
  });
});

describe("decodePngScaled: downscaling while decoding", () => {
  it("averages 2x2 blocks", async () => {
    const colours = [
      [10, 20, 30],
      [30, 40, 50],
      [0, 0, 0],
      [255, 255, 255],
      [100, 0, 0],
      [0, 100, 0],
      [1, 2, 3],
      [3, 4, 6],
    ];
    // Row 0: c0 c1 c4 c5; row 1: c2 c3 c6 c7.
    const at = (x: number, y: number) => colours[(x >> 1) * 4 + y * 2 + (x & 1)]!;
    const out = await decode({ width: 4, height: 2, colorType: 2, depth: 8, sample: at }, 2);
    expect(out).toMatchObject({ width: 2, height: 1, channels: 3 });
    expect(pixelAt(out, 0, 0)).toEqual([Math.round(295 / 4), Math.round(315 / 4), Math.round(335 / 4)]);
    expect(pixelAt(out, 1, 0)).toEqual([26, 27, 2]);
  });

  it("follows the box mapping for uneven ratios, every colour type", async () => {
    for (const [ct, depth] of COMBOS) {
      const s = spec(ct, depth, { width: 29, height: 17 });
      const out = await decode(s, 8);
      expect(out, `${ct}/${depth}`).toEqual(referenceDownscale(expected(s), 8, 5));
    }
  });

  it("weights colours by alpha, so transparent pixels do not darken edges", async () => {
    const s: PngSpec = { width: 2, height: 1, colorType: 6, depth: 8, sample: (x) => (x === 0 ? [255, 0, 0, 255] : [0, 0, 0, 0]) };
    expect(pixelAt(await decode(s, 1), 0, 0)).toEqual([255, 0, 0, 128]);
  });

  it("keeps the height proportional and at least 1", async () => {
    const wide = await decode({ width: 40, height: 1, colorType: 0, depth: 8, sample: (x) => [x] }, 4);
    expect(wide).toMatchObject({ width: 4, height: 1 });
    // Means of 0-9, 10-19, ...: 4.5, 14.5, ... rounded half up.
    expect(Array.from(wide.pixels.filter((_, i) => i % 3 === 0))).toEqual([5, 15, 25, 35]);
  });

  it("streams a large, highly compressible image through many small inflate pieces", async () => {
    // 3000x2000 RGBA in 10x10 blocks: every destination pixel at width 300 is one block's colour.
    const block = (x: number, y: number) => [(x / 10) & 255, (y / 10) & 255, ((x + y) / 10) & 255, 255 - ((x / 10) & 127)];
    const s: PngSpec = {
      width: 3000,
      height: 2000,
      colorType: 6,
      depth: 8,
      sample: (x, y) => block(x - (x % 10), y - (y % 10)),
      filter: () => 2,
    };
    const png = await buildPng(s);
    expect(png.length).toBeLessThan(24_000_000 / 20);
    const out = await decodePngScaled(png, 300);
    expect(out).toMatchObject({ width: 300, height: 200, channels: 4 });
    for (const [x, y] of [
      [0, 0],
      [299, 199],
      [150, 77],
      [17, 190],
    ] as const) {
      expect(pixelAt(out, x, y)).toEqual(block(x * 10, y * 10));
    }
  });
});

/**
 * A zlib stream of stored (uncompressed) deflate blocks, led by `empty` zero-length blocks: five
 * bytes of input each that inflate to nothing (RFC 1950/1951).
 */
function storedZlib(raw: Uint8Array, empty: number): Uint8Array {
  const parts: (Uint8Array | number[])[] = [[0x78, 0x01]];
  for (let i = 0; i < empty; i++) parts.push([0x00, 0x00, 0x00, 0xff, 0xff]);
  for (let o = 0; o < raw.length; o += 65535) {
    const block = raw.subarray(o, o + 65535);
    const n = block.length;
    parts.push([o + 65535 >= raw.length ? 1 : 0, n & 0xff, n >> 8, ~n & 0xff, (~n >> 8) & 0xff], block);
  }
  let a = 1;
  let b = 0;
  for (const v of raw) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  parts.push([b >> 8, b & 0xff, a >> 8, a & 0xff]);
  return concat(...parts);
}

describe("decodePngScaled: inflating in pieces", () => {
  it("keeps feeding input that inflates to nothing (tens of kilobytes of empty blocks)", async () => {
    const s = spec(6, 8, { width: 300, height: 200 });
    const zlib = storedZlib(pngScanlines(s), 12_000);
    expect(zlib.length).toBeGreaterThan(60_000);
    const out = await decode({ ...s, mangle: () => zlib }, 100);
    expect(out).toEqual(referenceDownscale(expected(s), 100, 67));
  });

  it("decodes one IDAT chunk or hundreds of tiny ones alike", async () => {
    const s = spec(2, 16, { width: 61, height: 40 });
    const want = expected(s);
    expect(await decode({ ...s, idatChunks: 1 })).toEqual(want);
    expect(await decode({ ...s, idatChunks: 400 })).toEqual(want);
  });
});

describe("decodePngScaled: broken files", () => {
  const good = spec(2, 8);

  it("rejects a bad signature, a missing IHDR, PLTE or IDAT", async () => {
    const png = await buildPng(good);
    await rejects(concat([0x89, 0x51], png.subarray(2)), /signature/);
    await rejects(concat(png.subarray(0, 8), pngChunk("IEND", [])), /IHDR/);
    await rejects(buildPng({ ...spec(3, 8), palette: undefined }), /PLTE/);
    const ihdrEnd = 8 + 25;
    await rejects(concat(png.subarray(0, ihdrEnd), pngChunk("IEND", [])), /no image data/);
  });

  it("rejects bad IHDR values and unknown critical chunks", async () => {
    await rejects(buildPng({ ...good, depth: 4 }), /bit depth/);
    const png = await buildPng(good);
    await rejects(concat(png.subarray(0, 33), pngChunk("ZZZZ", [1]), png.subarray(33)), /critical chunk ZZZZ/);
  });

  it("rejects truncated, corrupt and short image data", async () => {
    await rejects(buildPng({ ...good, mangle: (z) => z.subarray(0, z.length >> 1) }));
    await rejects(buildPng({ ...good, mangle: (z) => concat(z.subarray(0, 2), new Uint8Array(z.length - 2).fill(0xff)) }), /compressed/);
    const short = await deflate(pngScanlines({ ...good, height: H - 1 }));
    await rejects(buildPng({ ...good, mangle: () => short }), /ends early/);
    const png = await buildPng(good);
    await rejects(png.subarray(0, png.length - 30), /truncated/);
  });

  it("rejects an unknown filter type", async () => {
    const raw = pngScanlines(good);
    raw[(1 + W * 3) * 3] = 7; // filter byte of row 3
    const png = await buildPng(good);
    await rejects(concat(png.subarray(0, 33), pngChunk("IDAT", await deflate(raw)), pngChunk("IEND", [])), /filter type 7/);
  });

  it("ignores data after the last scanline", async () => {
    const extra = await deflate(concat(pngScanlines(good), new Uint8Array(5000).fill(9)));
    expect(await decode({ ...good, mangle: () => extra })).toEqual(expected(good));
  });

  it("rejects a maxWidth that is not a positive integer", async () => {
    const png = await buildPng(good);
    await expect(decodePngScaled(png, 0)).rejects.toThrow(RangeError);
    await expect(decodePngScaled(png, 2.5)).rejects.toThrow(RangeError);
  });
});
