import { PhotonImage } from "@cf-wasm/photon";
import { describe, expect, it } from "vitest";
import { makeThumbnails } from "../../../src/lib/images/thumbnails";
import { encodeJpeg } from "../../support/image-fixtures";
import { buildBmp, buildPng } from "../../support/image-fixtures-raster";

function sizeOf(bytes: Uint8Array): [number, number] {
  const image = PhotonImage.new_from_byteslice(bytes);
  try {
    return [image.get_width(), image.get_height()];
  } finally {
    image.free();
  }
}

describe("makeThumbnails", () => {
  it("makes one per width, largest first, never wider than the image", async () => {
    const thumbnails = (await makeThumbnails(
      encodeJpeg(1000, 40, (x) => [x & 255, 40, 90]),
      "jpeg",
      [200, 800, 1600],
    ))!;
    expect(thumbnails.map((t) => [t.width, t.contentType, ...sizeOf(t.bytes)])).toEqual([
      [1600, "image/jpeg", 1000, 40],
      [800, "image/jpeg", 800, 32],
      [200, "image/jpeg", 200, 8],
    ]);
  });

  it("keeps transparency as PNG, and turns opaque PNG and BMP into JPEG", async () => {
    const alpha = await buildPng({ width: 300, height: 30, colorType: 6, depth: 8, sample: (x) => [200, 10, 10, x % 256] });
    expect((await makeThumbnails(alpha, "png", [200]))!.map((t) => [t.contentType, ...sizeOf(t.bytes)])).toEqual([["image/png", 200, 20]]);
    const opaque = buildBmp({ width: 400, height: 20, bitCount: 24, value: () => 0x2040a0 });
    expect((await makeThumbnails(opaque, "bmp", [200]))!.map((t) => [t.contentType, ...sizeOf(t.bytes)])).toEqual([
      ["image/jpeg", 200, 10],
    ]);
  });

  it("fits tall images in a box twice as tall as wide, and makes none for a sliver too narrow for any box (decoded all the same)", async () => {
    const tall = buildBmp({ width: 300, height: 1200, bitCount: 24, value: () => 0x808080 });
    expect((await makeThumbnails(tall, "bmp", [200, 800]))!.map((t) => [t.width, ...sizeOf(t.bytes)])).toEqual([
      [800, 300, 1200],
      [200, 100, 400],
    ]);
    const sliver = buildBmp({ width: 1, height: 13_000, bitCount: 24, value: () => 0xffffff });
    expect(await makeThumbnails(sliver, "bmp", [200, 800, 1600])).toEqual([]);
  });
});
