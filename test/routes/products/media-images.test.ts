import { env } from "cloudflare:workers";
import { PhotonImage } from "@cf-wasm/photon";
import { beforeAll, describe, expect, it } from "vitest";
import { imageDimensions } from "../../../src/lib/images/formats";
import { contentHash } from "../../../src/services/media/storage";
import { bearer, me, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import {
  concat,
  encodeJpeg,
  gifWithMetadata,
  jpegWithMetadata,
  PLANTED,
  pngWithMetadata,
  SECRETS,
  testPixel,
  webpWithMetadata,
} from "../../support/image-fixtures";
import { contains, jpegExifTiff, pngChunks, riffChunks, tiffTags } from "../../support/image-fixtures-inspect";
import { captureLogs } from "../../support/logs";
import { type MediaItem, pathOf, productWithComponent, scan, upload, uploaded } from "../../support/media";
import { bootstrapAdmin } from "../../support/mfa";

let alice: { id: number; token: string };
let bob: { id: number; token: string };

beforeAll(async () => {
  const [a, b] = [await verifiedUser("imgalice"), await verifiedUser("imgbob")];
  alice = { id: a.id, token: a.tokens.access_token };
  bob = { id: b.id, token: b.tokens.access_token };
});

const jpeg = (bytes: Uint8Array, name = "photo.jpg") => ({ bytes, name, type: "image/jpeg" });

async function served(item: MediaItem): Promise<Uint8Array> {
  const response = await api(pathOf(item.image_url!));
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

async function usage(token: string) {
  const body = (await (await me(token)).json()) as { upload_file_count: number; upload_total_bytes: number };
  return [body.upload_file_count, body.upload_total_bytes];
}

describe("uploading a JPEG with GPS, maker notes and orientation 6", () => {
  it("is pending until scanned, then listed and served upright with only the allowed EXIF", async () => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    const response = await upload(`/v1/products/${product}/images`, alice.token, jpeg(jpegWithMetadata(true)), {
      description: "Front",
      image_metadata: JSON.stringify({ angle: "front" }),
    });
    expect(response.status, await response.clone().text()).toBe(201);
    const item = (await response.json()) as MediaItem;
    expect(item).toMatchObject({ filename: "photo.jpg", description: "Front", status: "pending" });
    expect(item.id).toMatch(/^[0-9a-f]{32}$/);
    expect(response.headers.get("location")).toBe(`/v1/products/${product}/images/${item.id}`);
    expect(item.image_metadata).toMatchObject({ angle: "front", exif: { Make: expect.any(String), Model: expect.any(String) } });
    expect(JSON.stringify(item.image_metadata)).not.toMatch(/GPS|Serial|MakerNote|Artist/);

    // Pending: the owner sees it, nobody else does; nothing is listed or served yet.
    expect((await api(`/v1/products/${product}/images/${item.id}`, { headers: bearer(alice.token) })).status).toBe(200);
    await expectProblem(await api(`/v1/products/${product}/images/${item.id}`), 404, "NOT_FOUND");
    expect(((await (await api(`/v1/products/${product}/images`)).json()) as { total: number }).total).toBe(0);
    await expectProblem(await api(pathOf(item.image_url!)), 404, "NOT_FOUND");
    const [count, bytes] = await usage(alice.token);
    expect(count).toBe(before[0]! + 1);
    expect(bytes).toBeGreaterThan(before[1]!);

    await scan("images", item.id);
    const list = await api(`/v1/products/${product}/images`);
    expect(roundTrips(list)).toBe(1);
    const page = (await list.json()) as { items: MediaItem[]; total: number };
    expect(page.total).toBe(1);
    // The scan decoded the image in full and made its thumbnails before publishing it.
    expect(page.items[0]).toMatchObject({ id: item.id, status: "clean", rejected_reason: null });
    expect(pathOf(page.items[0]!.thumbnail_url!)).toBe(`/uploads/images/thumbnails/200/${pathOf(item.image_url!).split("/").pop()}`);

    const image = await served(item);
    for (const secret of [...Object.values(SECRETS), PLANTED.xmp, PLANTED.iptc, PLANTED.comment, PLANTED.mpf]) {
      expect(contains(image, secret.slice(0, 16))).toBe(false);
    }
    const tiff = jpegExifTiff(image)!;
    const tags = tiffTags(tiff);
    expect(tags.ifd0).not.toContain(0x8825); // GPS IFD pointer
    expect(tags.ifd0).not.toContain(0x0112); // Orientation: the pixels are turned instead

    // The source is 16x8 with orientation 6 (rotate 90 clockwise): the served image is 8x16, and
    // its top-left pixel is the source's bottom-left one.
    const decoded = PhotonImage.new_from_byteslice(image);
    try {
      expect([decoded.get_width(), decoded.get_height()]).toEqual([8, 16]);
      const rgba = decoded.get_raw_pixels();
      const at = (x: number, y: number) => Array.from(rgba.subarray((y * 8 + x) * 4, (y * 8 + x) * 4 + 3));
      const near = (actual: number[], expected: readonly number[]) =>
        actual.forEach((v, i) => expect(Math.abs(v - expected[i]!)).toBeLessThan(40));
      near(at(0, 0), testPixel(0, 7));
      near(at(7, 0), testPixel(0, 0));
      near(at(0, 15), testPixel(15, 7));
      near(at(7, 15), testPixel(15, 0));
    } finally {
      decoded.free();
    }
  });
});

describe("the upload request leaves the pixel work to the media job", () => {
  it("quarantines the sanitised bytes as sent, with their orientation recorded; the job serves them upright under the address the 201 named", async () => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    const item = await uploaded(`/v1/products/${product}/images`, alice.token, jpeg(jpegWithMetadata(true)));
    const key = pathOf(item.image_url!).split("/").pop()!;

    // The request stored the 16x8 source unturned (no decode, no re-encode) and the orientation beside it.
    const quarantined = await env.UPLOADS.get(`quarantine/images/${item.id}`);
    expect(quarantined?.customMetadata).toEqual({ orientation: "6" });
    const sent = new Uint8Array(await quarantined!.arrayBuffer());
    expect(imageDimensions(sent, "jpeg")).toEqual({ width: 16, height: 8 });
    expect(tiffTags(jpegExifTiff(sent)!).ifd0).not.toContain(0x0112);
    expect(key).toBe(`${await contentHash(sent, 6)}.jpg`);
    expect(await usage(alice.token)).toEqual([before[0]! + 1, before[1]! + sent.length]);
    // While the job has not run, the owner sees it in the product's detail as processing; nobody else does.
    const detail = async (token: string | null) =>
      ((await (await api(`/v1/products/${product}`, { headers: token ? bearer(token) : {} })).json()) as { images: MediaItem[] }).images;
    expect((await detail(alice.token)).map((i) => [i.id, i.status])).toEqual([[item.id, "pending"]]);
    expect(await detail(null)).toEqual([]);
    expect(await detail(bob.token)).toEqual([]);

    await scan("images", item.id);
    expect((await detail(null)).map((i) => [i.id, i.status])).toEqual([[item.id, "clean"]]);
    const image = await served(item);
    expect(imageDimensions(image, "jpeg")).toEqual({ width: 8, height: 16 });
    expect(await env.UPLOADS.head(`quarantine/images/${item.id}`)).toBeNull();
    // The quota follows the size served (a lossless turn changes it a little).
    expect(await usage(alice.token)).toEqual([before[0]! + 1, before[1]! + image.length]);

    // Equal bytes with the same orientation share the address (and the object); nothing is turned twice wrong.
    const again = await uploaded(`/v1/products/${product}/images`, alice.token, jpeg(jpegWithMetadata(true)));
    expect(again.image_url).toBe(item.image_url);
    await scan("images", again.id);
    expect(await served(again)).toEqual(image);
  });

  it("a PNG with an EXIF orientation is turned by the job too (decoded, turned, re-encoded)", async () => {
    const { product } = await productWithComponent(alice.token);
    const item = await uploaded(`/v1/products/${product}/images`, alice.token, {
      bytes: await pngWithMetadata(),
      name: "board.png",
      type: "image/png",
    });
    const quarantined = await env.UPLOADS.get(`quarantine/images/${item.id}`);
    expect(quarantined?.customMetadata).toEqual({ orientation: "6" });
    const sent = imageDimensions(new Uint8Array(await quarantined!.arrayBuffer()), "png")!;
    expect(sent.width).not.toBe(sent.height);
    await scan("images", item.id);
    expect(imageDimensions(await served(item), "png")).toEqual({ width: sent.height, height: sent.width });
  });

  it("an upright JPEG keeps the SHA-256 of its bytes as its address and no orientation", async () => {
    const { product } = await productWithComponent(alice.token);
    const item = await uploaded(`/v1/products/${product}/images`, alice.token, jpeg(jpegWithMetadata(true, {}, 1)));
    const quarantined = await env.UPLOADS.get(`quarantine/images/${item.id}`);
    expect(quarantined?.customMetadata).toEqual({});
    const sent = new Uint8Array(await quarantined!.arrayBuffer());
    expect(pathOf(item.image_url!).split("/").pop()).toBe(`${await contentHash(sent, 1)}.jpg`);
    await scan("images", item.id);
    expect(await served(item)).toEqual(sent);
  });
});

describe("other formats keep no metadata", () => {
  it("PNG text chunks, WebP XMP and GIF comments are gone from what is served", async () => {
    const { component } = await productWithComponent(alice.token);
    const base = `/v1/components/${component}/images`;
    const png = await uploaded(base, alice.token, { bytes: await pngWithMetadata(), name: "board.png", type: "image/png" });
    const webp = await uploaded(base, alice.token, { bytes: webpWithMetadata(), name: "board.webp", type: "image/webp" });
    const gif = await uploaded(base, alice.token, { bytes: gifWithMetadata(), name: "board.gif", type: "image/gif" });
    for (const item of [png, webp, gif]) await scan("images", item.id);

    const pngBytes = await served(png);
    expect(pngChunks(pngBytes).map((chunk) => chunk.type)).not.toEqual(expect.arrayContaining(["tEXt"]));
    expect(pngChunks(pngBytes).some((chunk) => ["tEXt", "iTXt", "zTXt"].includes(chunk.type))).toBe(false);
    expect(contains(pngBytes, PLANTED.pngText)).toBe(false);
    const webpBytes = await served(webp);
    expect(riffChunks(webpBytes).some((chunk) => chunk.fourcc === "XMP ")).toBe(false);
    expect(contains(webpBytes, "WEBP-XMP-SECRET")).toBe(false);
    expect(contains(await served(gif), "GIF-COMMENT-SECRET")).toBe(false);

    const page = (await (await api(`${base}?size=2`)).json()) as { items: MediaItem[]; total: number; pages: number };
    expect([page.items.map((item) => item.id), page.total, page.pages]).toEqual([[png.id, webp.id], 3, 2]);
  });
});

describe("refused images store nothing", () => {
  async function expectNothingStored(token: string, before: number[]) {
    expect(await usage(token)).toEqual(before);
    const listed = await env.UPLOADS.list({ prefix: "quarantine/images/" });
    const ids = listed.objects.map((o) => o.key.split("/").pop());
    const rows = await env.DB.prepare("SELECT id FROM images").all<{ id: string }>();
    // Every quarantined object belongs to a row: a refused upload left none behind.
    expect(ids.every((id) => rows.results.some((row) => row.id === id))).toBe(true);
  }

  it("a polyglot (a JPEG with a ZIP after its end) is 422", async () => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    const zip = concat([0x50, 0x4b, 0x03, 0x04], new TextEncoder().encode("payload.sh#!/bin/sh"));
    const response = await upload(`/v1/products/${product}/images`, alice.token, jpeg(concat(encodeJpeg(16, 8, testPixel), zip)));
    await expectProblem(response, 422, "IMAGE_UNREADABLE");
    await expectNothingStored(alice.token, before);
  });

  it("a lying content type or extension is 415", async () => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    const path = `/v1/products/${product}/images`;
    const png = await pngWithMetadata();
    await expectProblem(await upload(path, alice.token, { bytes: png, name: "photo.jpg", type: "image/jpeg" }), 415, "MEDIA_TYPE_MISMATCH");
    await expectProblem(await upload(path, alice.token, { bytes: png, name: "photo.png", type: "image/jpeg" }), 415, "MEDIA_TYPE_MISMATCH");
    await expectProblem(
      await upload(path, alice.token, { bytes: png, name: "photo.svg", type: "image/svg+xml" }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    await expectProblem(
      await upload(path, alice.token, { bytes: new TextEncoder().encode("hello"), name: "a.png", type: "image/png" }),
      415,
      "MEDIA_TYPE_MISMATCH",
    );
    await expectNothingStored(alice.token, before);
  });

  it("an image over the role's pixel cap is 400 with the number of pixels", async () => {
    const { product } = await productWithComponent(alice.token);
    // A valid JPEG whose frame header claims 4096 x 3073 = 12,587,008 pixels, just over the contributor cap.
    const bytes = encodeJpeg(16, 8, testPixel);
    const sof = bytes.findIndex((b, i) => b === 0xff && bytes[i + 1] === 0xc0);
    bytes.set([3073 >> 8, 3073 & 0xff, 4096 >> 8, 4096 & 0xff], sof + 5);
    const problem = await expectProblem(
      await upload(`/v1/products/${product}/images`, alice.token, jpeg(bytes)),
      400,
      "IMAGE_TOO_MANY_PIXELS",
    );
    expect(problem.detail).toBe("Image has 12587008 pixels, exceeding the maximum allowed 12582912.");
  });

  it("a body over the role's size cap is 413 by its declared length", async () => {
    const { product } = await productWithComponent(alice.token);
    const response = await api(`/v1/products/${product}/images`, {
      method: "POST",
      headers: { ...bearer(alice.token), "content-type": "multipart/form-data; boundary=x", "content-length": String(11 * 1024 * 1024) },
      body: new Uint8Array(11 * 1024 * 1024),
    });
    const problem = await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
    expect(problem.detail).toContain("10485760 bytes for the contributor role");
  });

  it("a missing file part or a bad image_metadata is 422 with a pointer", async () => {
    const { product } = await productWithComponent(alice.token);
    const path = `/v1/products/${product}/images`;
    const form = new FormData();
    form.append("description", "no file");
    const missing = await expectProblem(
      await api(path, { method: "POST", headers: bearer(alice.token), body: form }),
      422,
      "VALIDATION_FAILED",
    );
    expect(missing.errors?.[0]?.pointer).toBe("/file");
    const bad = await upload(path, alice.token, jpeg(encodeJpeg(16, 8, testPixel)), { image_metadata: "[1,2]" });
    expect((await expectProblem(bad, 422, "VALIDATION_FAILED")).errors?.[0]?.pointer).toBe("/image_metadata");
    await expectProblem(
      await api(path, { method: "POST", headers: { ...bearer(alice.token), "content-type": "application/json" }, body: "{}" }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
  });
});

describe("counts of images", () => {
  it("the owner's profile counts images once they passed the scan, and deletions uncount them", async () => {
    const dana = await verifiedUser("imgdana");
    const token = dana.tokens.access_token;
    const imageCount = async () => ((await (await api(`/v1/profiles/${dana.username}`)).json()) as { image_count: number }).image_count;
    const { product, component } = await productWithComponent(token);
    const a = await uploaded(`/v1/products/${product}/images`, token, jpeg(encodeJpeg(16, 8, testPixel)));
    const b = await uploaded(`/v1/components/${component}/images`, token, jpeg(encodeJpeg(8, 8, testPixel)));
    await scan("images", a.id);
    await scan("images", b.id);
    expect(await imageCount()).toBe(2);
    expect((await api(`/v1/products/${product}/images/${a.id}`, { method: "DELETE", headers: bearer(token) })).status).toBe(204);
    expect(await imageCount()).toBe(1);
  });
});

describe("who may add and remove images", () => {
  it("someone else's record is 404 for uploads and deletes; the owner's delete releases the quota and the object", async () => {
    const { product } = await productWithComponent(alice.token);
    const path = `/v1/products/${product}/images`;
    await expectProblem(await upload(path, bob.token, jpeg(encodeJpeg(16, 8, testPixel))), 404, "NOT_FOUND");
    await expectProblem(await upload(path, null, jpeg(encodeJpeg(16, 8, testPixel))), 401, "AUTHENTICATION_REQUIRED");
    const before = await usage(alice.token);
    // Bytes no other test uploads: an object shared with another record would stay.
    const item = await uploaded(path, alice.token, jpeg(encodeJpeg(16, 8, (x, y) => [x * 3, y * 5, 77])));
    await scan("images", item.id);
    const detail = await api(`/v1/products/${product}`);
    const { version } = (await detail.clone().json()) as { version: number };
    await expectProblem(await api(`${path}/${item.id}`, { method: "DELETE", headers: bearer(bob.token) }), 404, "NOT_FOUND");

    expect((await api(`${path}/${item.id}`, { method: "DELETE", headers: bearer(alice.token) })).status).toBe(204);
    expect(await usage(alice.token)).toEqual(before);
    await expectProblem(await api(pathOf(item.image_url!)), 404, "NOT_FOUND");
    await expectProblem(await api(`${path}/${item.id}`), 404, "NOT_FOUND");
    // The record's version stays; its ETag changed with its media.
    const after = await api(`/v1/products/${product}`);
    expect(((await after.json()) as { version: number }).version).toBe(version);
    expect(after.headers.get("etag")).not.toBe(detail.headers.get("etag"));
  });

  it("a superuser with TOTP moderates by deleting (audited), never by adding", async () => {
    const admin = await bootstrapAdmin();
    const { component } = await productWithComponent(alice.token);
    const path = `/v1/components/${component}/images`;
    const item = await uploaded(path, alice.token, jpeg(encodeJpeg(16, 8, (x, y) => [x * 9, 40, y * 9])));
    await expectProblem(await upload(path, admin.tokens.access_token, jpeg(encodeJpeg(16, 8, testPixel))), 404, "NOT_FOUND");
    // The pending item is visible to the moderator, as to the owner.
    expect((await api(`${path}/${item.id}`, { headers: bearer(admin.tokens.access_token) })).status).toBe(200);
    const logs = captureLogs();
    const deleted = await api(`${path}/${item.id}`, { method: "DELETE", headers: bearer(admin.tokens.access_token) });
    logs.restore();
    expect(deleted.status).toBe(204);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        msg: "audit",
        event: "moderation.media.deleted",
        actor_id: admin.id,
        owner_id: alice.id,
        record_id: component,
      }),
    );
  });

  it("two uploads racing for the last slot of the quota: one lands", async () => {
    const carol = await verifiedUser("imgcarol");
    const token = carol.tokens.access_token;
    const { product } = await productWithComponent(token);
    await env.DB.prepare("UPDATE users SET upload_file_count = 999 WHERE id = ?").bind(carol.id).run();
    const responses = await Promise.all(
      [1, 2].map((i) => upload(`/v1/products/${product}/images`, token, jpeg(encodeJpeg(16, 8, (x, y) => [x * i, y, 0])))),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 403]);
    await expectProblem(responses.find((r) => r.status === 403)!, 403, "UPLOAD_QUOTA_EXCEEDED");
    expect((await usage(token))[0]).toBe(1000);
  });
});
