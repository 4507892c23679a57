import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, me, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { gifWithMetadata } from "../../support/image-fixtures-gif-webp-bmp";
import { buildBmp } from "../../support/image-fixtures-raster";
import {
  type MediaItem,
  type Part,
  pathOf,
  pendingWithoutJob,
  productWithComponent,
  runMediaJob,
  scan,
  upload,
  uploaded,
} from "../../support/media";
import { bootstrapAdmin } from "../../support/mfa";

// decisions.md, Media states: pending -> clean | rejected. An image that cannot be decoded never
// counts as clean; the owner (and a moderator) sees pending and rejected media, everyone else
// clean media only.

let alice: { id: number; token: string };
let bob: { token: string };

beforeAll(async () => {
  const a = await verifiedUser("states_a");
  const b = await verifiedUser("states_b");
  alice = { id: a.id, token: a.tokens.access_token };
  bob = { token: b.tokens.access_token };
});

const jpeg = (bytes: Uint8Array, name = "photo.jpg"): Part => ({ bytes, name, type: "image/jpeg" });

/** A 16x16 baseline JPEG whose frame header claims 3000x3000: its scan data runs out long before. */
function oversizedFrameJpeg(): Uint8Array {
  const bytes = encodeJpeg(16, 16, (x, y) => [x * 15, y * 15, 90]).slice();
  for (let i = 2; i + 9 < bytes.length; ) {
    if (bytes[i] !== 0xff) throw new Error("fixture: lost the markers");
    const marker = bytes[i + 1]!;
    const length = (bytes[i + 2]! << 8) | bytes[i + 3]!;
    if (marker === 0xc0) {
      bytes.set([3000 >> 8, 3000 & 255, 3000 >> 8, 3000 & 255], i + 5);
      return bytes;
    }
    i += 2 + length;
  }
  throw new Error("fixture: no SOF0");
}

/** A JPEG whose first Huffman table claims more codes of length 2 than there can be (over-subscribed). */
function corruptHuffmanJpeg(): Uint8Array {
  const bytes = encodeJpeg(16, 16, (x, y) => [x * 15, y * 15, 90]).slice();
  for (let i = 2; i + 4 < bytes.length; ) {
    const marker = bytes[i + 1]!;
    const length = (bytes[i + 2]! << 8) | bytes[i + 3]!;
    if (marker === 0xc4) {
      bytes[i + 5 + 1] = 255; // table class/id at i+4, then 16 counts: codes of length 2
      return bytes;
    }
    i += 2 + length;
  }
  throw new Error("fixture: no DHT");
}

/** A JPEG whose scan data was cut short in the middle (the end-of-image marker kept). */
function truncatedScanJpeg(): Uint8Array {
  const whole = encodeJpeg(64, 64, (x, y) => [(x * 37) & 255, (y * 53) & 255, ((x + y) * 11) & 255], { quality: 95 });
  const cut = Math.floor(whole.length * 0.6);
  return Uint8Array.from([...whole.subarray(0, cut), 0xff, 0xd9]);
}

async function usage(token: string): Promise<[number, number]> {
  const body = (await (await me(token)).json()) as { upload_file_count: number; upload_total_bytes: number };
  return [body.upload_file_count, body.upload_total_bytes];
}

async function listed(path: string, token: string | null, trips = 1): Promise<{ items: MediaItem[]; total: number }> {
  const response = await api(path, { headers: token ? bearer(token) : {} });
  expect(response.status).toBe(200);
  // The page and its count in one round trip, a signed-in caller's token check with them; a
  // superuser's page is read again once the check has shown their powers (`trips` 2).
  expect(roundTrips(response)).toBe(trips);
  return (await response.json()) as { items: MediaItem[]; total: number };
}

async function detailImages(product: number, token: string | null): Promise<MediaItem[]> {
  const response = await api(`/v1/products/${product}`, { headers: token ? bearer(token) : {} });
  expect(response.status).toBe(200);
  return ((await response.json()) as { images: MediaItem[] }).images;
}

describe("an image that cannot be decoded", () => {
  it.each([
    ["a frame header larger than its data (16x16 patched to 3000x3000)", oversizedFrameJpeg()],
    ["scan data cut short", truncatedScanJpeg()],
  ])("%s is rejected by the media job, never served, and its quota released", async (_, bytes) => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    // Pending as an upload leaves it (the upload itself: uploads tests), with no queue message: the
    // real consumer beside the tests would otherwise settle it before this test's own job.
    const item = await pendingWithoutJob("images", product, alice.id, { ...jpeg(bytes), width: 16, height: 16 });
    expect((await usage(alice.token))[0]).toBe(before[0] + 1);

    // Settled at the first delivery: acknowledged, not retried into the dead-letter queue.
    expect(await runMediaJob({ type: "media.scan", kind: "images", id: item.id })).toEqual({ acked: true, retried: false });
    expect(await usage(alice.token)).toEqual(before);
    await expectProblem(await api(pathOf(item.url)), 404, "NOT_FOUND");
    const key = pathOf(item.url).split("/").pop()!;
    expect(await env.UPLOADS.head(`images/${key}`)).toBeNull();
    expect(await env.UPLOADS.head(`images/thumbnails/200/${key}`)).toBeNull();
    expect(await env.UPLOADS.head(`quarantine/images/${item.id}`)).toBeNull();

    // Its owner sees it, rejected, in the item, the media list and the record's detail.
    const own = await api(`/v1/products/${product}/images/${item.id}`, { headers: bearer(alice.token) });
    expect(await own.json()).toMatchObject({ id: item.id, status: "rejected", rejected_reason: "undecodable" });
    const page = await listed(`/v1/products/${product}/images`, alice.token);
    expect(page.total).toBe(1);
    expect(page.items.map((i) => [i.id, i.status])).toEqual([[item.id, "rejected"]]);
    expect((await detailImages(product, alice.token)).map((i) => [i.id, i.status])).toEqual([[item.id, "rejected"]]);

    // Nobody else does.
    await expectProblem(await api(`/v1/products/${product}/images/${item.id}`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/products/${product}/images/${item.id}`, { headers: bearer(bob.token) }), 404, "NOT_FOUND");
    expect(await listed(`/v1/products/${product}/images`, null)).toMatchObject({ items: [], total: 0 });
    expect(await listed(`/v1/products/${product}/images`, bob.token)).toMatchObject({ items: [], total: 0 });
    expect(await detailImages(product, null)).toEqual([]);
    expect(await detailImages(product, bob.token)).toEqual([]);

    // Delivered again, nothing changes (the quota is not released twice).
    await scan("images", item.id);
    expect(await usage(alice.token)).toEqual(before);
  });

  it("a decodable image beside it is published with its thumbnails", async () => {
    const { product } = await productWithComponent(alice.token);
    const item = await uploaded(
      `/v1/products/${product}/images`,
      alice.token,
      jpeg(encodeJpeg(640, 320, (x, y) => [x & 255, y & 255, 60])),
    );
    await scan("images", item.id);
    const page = await listed(`/v1/products/${product}/images`, null);
    expect(page.items).toEqual([expect.objectContaining({ id: item.id, status: "clean", rejected_reason: null })]);
    expect((await api(pathOf(item.image_url!))).status).toBe(200);
    expect((await api(pathOf(page.items[0]!.thumbnail_url!))).status).toBe(200);
  });
});

describe("who sees pending and rejected media", () => {
  it("the owner and a moderator see them with their status; others see clean media only", async () => {
    const admin = await bootstrapAdmin();
    const { product, component } = await productWithComponent(alice.token);
    const path = `/v1/components/${component}/images`;
    const clean = await uploaded(
      path,
      alice.token,
      jpeg(
        encodeJpeg(32, 16, () => [200, 30, 30]),
        "clean.jpg",
      ),
    );
    await scan("images", clean.id);
    const rejected = await uploaded(path, alice.token, jpeg(oversizedFrameJpeg(), "broken.jpg"));
    await scan("images", rejected.id);
    // No queue message: the real consumer would otherwise publish it while the test looks.
    const pending = await pendingWithoutJob("images", component, alice.id, {
      ...jpeg(
        encodeJpeg(32, 16, () => [30, 200, 30]),
        "new.jpg",
      ),
      width: 32,
      height: 16,
    });

    const all = [
      [clean.id, "clean"],
      [rejected.id, "rejected"],
      [pending.id, "pending"],
    ];
    for (const token of [alice.token, admin.tokens.access_token]) {
      const page = await listed(path, token, token === alice.token ? 1 : 2);
      expect(page.total).toBe(3);
      expect(page.items.map((i) => [i.id, i.status])).toEqual(all);
      const detail = (await (await api(`/v1/components/${component}`, { headers: bearer(token) })).json()) as { images: MediaItem[] };
      expect(detail.images.map((i) => [i.id, i.status])).toEqual(all);
      expect((await api(`${path}/${rejected.id}`, { headers: bearer(token) })).status).toBe(200);
    }
    for (const token of [null, bob.token]) {
      expect((await listed(path, token)).items.map((i) => i.id)).toEqual([clean.id]);
      const detail = (await (await api(`/v1/components/${component}`, { headers: token ? bearer(token) : {} })).json()) as {
        images: MediaItem[];
      };
      expect(detail.images.map((i) => i.id)).toEqual([clean.id]);
    }
    // The export holds clean media only, whoever asks.
    const exported = await api(`/v1/products/${product}/export?format=json`, { headers: bearer(alice.token) });
    expect(exported.status).toBe(200);
    const text = await exported.text();
    expect(text).toContain(clean.id);
    expect(text).not.toMatch(new RegExp(`${rejected.id}|${pending.id}`));
  });

  it("a signed-in list or item read costs one round trip; a token revoked since lists as anonymous, in a second", async () => {
    const carol = await verifiedUser("carol");
    const token = carol.tokens.access_token;
    const { product } = await productWithComponent(token);
    const path = `/v1/products/${product}/images`;
    const own = await pendingWithoutJob("images", product, carol.id, {
      ...jpeg(
        encodeJpeg(16, 16, () => [9, 9, 9]),
        "own.jpg",
      ),
      width: 16,
      height: 16,
    });
    expect((await listed(path, token)).total).toBe(1);
    // One item: the token check travels with its read too.
    const item = await api(`${path}/${own.id}`, { headers: bearer(token) });
    expect(item.status).toBe(200);
    expect(roundTrips(item)).toBe(1);
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(token) })).status).toBe(204);
    // The page read as Carol travels with the check that finds her token revoked: read again, anonymously.
    expect(await listed(path, token, 2)).toMatchObject({ items: [], total: 0 });
    const revoked = await api(`${path}/${own.id}`, { headers: bearer(token) });
    await expectProblem(revoked, 404, "NOT_FOUND");
    expect(roundTrips(revoked)).toBe(1);
  });

  it("deleting a rejected item frees nothing twice; deleting its record neither", async () => {
    const { product: first } = await productWithComponent(alice.token);
    const { product: second } = await productWithComponent(alice.token);
    const kept = await uploaded(`/v1/products/${second}/images`, alice.token, jpeg(encodeJpeg(24, 24, () => [9, 9, 9])));
    await scan("images", kept.id);
    const before = await usage(alice.token);
    const one = await uploaded(`/v1/products/${first}/images`, alice.token, jpeg(oversizedFrameJpeg()));
    const two = await uploaded(`/v1/products/${first}/images`, alice.token, jpeg(truncatedScanJpeg()));
    await scan("images", one.id);
    await scan("images", two.id);
    expect(await usage(alice.token)).toEqual(before);

    const deleted = await api(`/v1/products/${first}/images/${one.id}`, { method: "DELETE", headers: bearer(alice.token) });
    expect(deleted.status).toBe(204);
    expect(await usage(alice.token)).toEqual(before);
    const removed = await api(`/v1/products/${first}`, { method: "DELETE", headers: bearer(alice.token) });
    expect(removed.status).toBe(204);
    expect(await usage(alice.token)).toEqual(before);
  });
});

describe("formats the media job cannot decode are refused at upload", () => {
  it("a JPEG whose Huffman table is corrupt: 422, nothing stored", async () => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    const response = await upload(`/v1/products/${product}/images`, alice.token, jpeg(corruptHuffmanJpeg()));
    const problem = await expectProblem(response, 422, "IMAGE_UNREADABLE");
    expect(problem.detail).toMatch(/DHT|Huffman/);
    expect(await usage(alice.token)).toEqual(before);
  });

  it("an RLE-compressed BMP: 415", async () => {
    const { product } = await productWithComponent(alice.token);
    const before = await usage(alice.token);
    const rle = buildBmp({
      width: 4,
      height: 2,
      bitCount: 8,
      compression: 1,
      palette: [
        [0, 0, 0],
        [255, 255, 255],
      ],
      value: (x) => x & 1,
    });
    const response = await upload(`/v1/products/${product}/images`, alice.token, { bytes: rle, name: "scan.bmp", type: "image/bmp" });
    const problem = await expectProblem(response, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(problem.detail).toMatch(/RLE/);
    expect(await usage(alice.token)).toEqual(before);
  });

  it("a GIF of more pixels than can be decoded whole: 400 with the decisions.md message", async () => {
    const { product } = await productWithComponent(alice.token);
    const gif = gifWithMetadata().slice();
    gif.set([0x10, 0x05, 0xb0, 0x04], 6); // logical screen 1296 x 1200 = 1,555,200 px
    const response = await upload(`/v1/products/${product}/images`, alice.token, { bytes: gif, name: "big.gif", type: "image/gif" });
    const problem = await expectProblem(response, 400, "IMAGE_TOO_MANY_PIXELS");
    expect(problem.detail).toBe("Image has 1555200 pixels, exceeding the maximum allowed 1500000.");
  });
});
