import { describe, expect, it } from "vitest";
import { decodeWithPhoton } from "../../../src/lib/images/encode";
import { ImageStructureError } from "../../../src/lib/images/exif";
import { checkGifFrames } from "../../../src/lib/images/gif-frames";
import { makeThumbnails } from "../../../src/lib/images/thumbnails";
import { gifWithMetadata } from "../../support/image-fixtures-gif-webp-bmp";

const text = (s: string) => new TextEncoder().encode(s);

/** A straightforward GIF LZW encoder (appendix F): growing code sizes, a clear code when the table is full. */
function lzwEncode(indices: number[], minCodeSize: number): number[] {
  const clear = 1 << minCodeSize;
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  let size = minCodeSize + 1;
  const emit = (code: number) => {
    acc |= code << bits;
    bits += size;
    while (bits >= 8) {
      out.push(acc & 0xff);
      acc >>>= 8;
      bits -= 8;
    }
  };
  let table = new Map<number, number>();
  let next = clear + 2;
  emit(clear);
  let w = indices[0]!;
  for (const k of indices.slice(1)) {
    const key = w * 4096 + k;
    const found = table.get(key);
    if (found !== undefined) {
      w = found;
      continue;
    }
    emit(w);
    if (next < 4096) {
      table.set(key, next++);
      // The decoder adds this entry one code later, so it widens its codes one code later too.
      if (next > 1 << size && size < 12) size++;
    } else {
      emit(clear);
      table = new Map();
      next = clear + 2;
      size = minCodeSize + 1;
    }
    w = k;
  }
  emit(w);
  emit(clear + 1);
  if (bits > 0) out.push(acc & 0xff);
  return out;
}

const subBlocks = (data: number[]) => {
  const out: number[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const part = data.slice(i, i + 255);
    out.push(part.length, ...part);
  }
  return [...out, 0];
};

/** A GIF of `width` x `height` with 16 grey levels, one image descriptor per frame's LZW data. */
function gif(width: number, height: number, frames: number[][]): Uint8Array {
  const palette = Array.from({ length: 16 }, (_, i) => [i * 17, i * 17, i * 17]).flat();
  const head = [...text("GIF89a"), width & 255, width >> 8, height & 255, height >> 8, 0xf3, 0, 0, ...palette];
  const body = frames.flatMap((data) => [0x2c, 0, 0, 0, 0, width & 255, width >> 8, height & 255, height >> 8, 0, 4, ...subBlocks(data)]);
  return Uint8Array.from([...head, ...body, 0x3b]);
}

const pattern = (width: number, height: number) =>
  Array.from({ length: width * height }, (_, i) => ((i % width) * 3 + Math.floor(i / width) * 5 + ((i * 7919) % 13 === 0 ? 9 : 0)) & 15);

describe("checkGifFrames", () => {
  it("accepts real LZW streams (growing code sizes, a full table) that photon decodes to the same pixels", () => {
    const indices = pattern(300, 120);
    const bytes = gif(300, 120, [lzwEncode(indices, 4), lzwEncode(indices.slice().reverse(), 4)]);
    expect(() => checkGifFrames(bytes)).not.toThrow();
    const raster = decodeWithPhoton(bytes);
    expect([raster.width, raster.height]).toEqual([300, 120]);
    for (const i of [0, 1, 299, 300, 17_777, 35_999]) expect(raster.pixels[i * 4]).toBe(indices[i]! * 17);
    expect(() => checkGifFrames(gifWithMetadata())).not.toThrow();
  });

  it.each([
    ["a later frame with an invalid code", [4, 0, 1, 4, 2]],
    ["a later frame short of pixels", lzwEncode(pattern(300, 120).slice(0, 30_000), 4)],
    ["a later frame that starts with a non-literal", [0x11, 0x01]],
  ])("refuses %s, which photon (first frame only) would not notice", (_, broken) => {
    const indices = pattern(300, 120);
    const bytes = gif(300, 120, [lzwEncode(indices, 4), broken]);
    expect(() => decodeWithPhoton(bytes)).not.toThrow();
    expect(() => checkGifFrames(bytes)).toThrow(ImageStructureError);
  });

  it("makes the media job's decode fail for such a GIF", async () => {
    const indices = pattern(300, 120);
    const bytes = gif(300, 120, [lzwEncode(indices, 4), lzwEncode(indices.slice(0, 100), 4)]);
    await expect(makeThumbnails(bytes, "gif", [200])).rejects.toThrow(/frame 2 ends after 100 of 36000 pixels/);
    expect(await makeThumbnails(gif(300, 120, [lzwEncode(indices, 4)]), "gif", [200])).toHaveLength(1);
  });
});
