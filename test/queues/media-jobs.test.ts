import { env } from "cloudflare:workers";
import { PhotonImage } from "@cf-wasm/photon";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, me, verifiedUser } from "../support/accounts";
import { EXTERNAL_SCANNER_VARS } from "../support/fake-upstream-config";
import { api, expectProblem } from "../support/http";
import { encodeJpeg } from "../support/image-fixtures";
import { type MediaItem, pathOf, pendingWithoutJob, productWithComponent, runMediaJob, scan, setRole, uploaded } from "../support/media";

let owner: { id: number; token: string };

beforeAll(async () => {
  const user = await verifiedUser("jobowner");
  owner = { id: user.id, token: user.tokens.access_token };
  await setRole(owner.id, "lab");
});

const keyOf = (url: string) => pathOf(url).split("/").pop()!;
const text = (value: string) => ({ bytes: new TextEncoder().encode(value), name: "notes.txt", type: "text/plain" });

async function sizeOf(path: string): Promise<[number, number, string | null]> {
  const response = await api(path);
  expect(response.status, path).toBe(200);
  const image = PhotonImage.new_from_byteslice(new Uint8Array(await response.arrayBuffer()));
  try {
    return [image.get_width(), image.get_height(), response.headers.get("content-type")];
  } finally {
    image.free();
  }
}

describe("thumbnails", () => {
  it("are made at 200, 800 and 1600 px by the scan, from its full decode, before the image is listed", async () => {
    const { product } = await productWithComponent(owner.token);
    const bytes = encodeJpeg(2000, 96, (x, y) => [(x * 7) & 255, (y * 3) & 255, 128]);
    const item = await uploaded(`/v1/products/${product}/images`, owner.token, { bytes, name: "wide.jpg", type: "image/jpeg" });
    expect(item.thumbnail_url).toBe(item.image_url);
    await scan("images", item.id);
    const listed = ((await (await api(`/v1/products/${product}/images`)).json()) as { items: MediaItem[] }).items[0]!;
    const key = keyOf(item.image_url!);
    expect(pathOf(listed.thumbnail_url!)).toBe(`/uploads/images/thumbnails/200/${key}`);
    for (const width of [1600, 800, 200]) {
      const [w, h, type] = await sizeOf(`/uploads/images/thumbnails/${width}/${key}`);
      // Each is averaged down from the next larger one, so the height may round one pixel apart.
      expect([w, type]).toEqual([width, "image/jpeg"]);
      expect(Math.abs(h - (96 * width) / 2000)).toBeLessThanOrEqual(1);
    }
    // A thumbnail message (as queued before the scan made them) finds them made and does nothing.
    expect(await runMediaJob({ type: "media.thumbnails", id: item.id })).toEqual({ acked: true, retried: false });
  });

  it("a thumbnail job for an image published without thumbnails that cannot read it is retried, so it ends in the dead-letter queue", async () => {
    const { product } = await productWithComponent(owner.token);
    const item = await uploaded(`/v1/products/${product}/images`, owner.token, {
      bytes: encodeJpeg(32, 16, () => [10, 200, 30]),
      name: "gone.jpg",
      type: "image/jpeg",
    });
    await scan("images", item.id);
    // As an image published before the scan made thumbnails: clean, none made.
    await env.DB.prepare("UPDATE images SET thumbnails_ready = 0 WHERE id = ?").bind(item.id).run();
    await env.UPLOADS.delete(`images/${keyOf(item.image_url!)}`);
    expect(await runMediaJob({ type: "media.thumbnails", id: item.id })).toEqual({ acked: false, retried: true });
    const listed = ((await (await api(`/v1/products/${product}/images`)).json()) as { items: MediaItem[] }).items[0]!;
    expect(listed.thumbnail_url).toBe(item.image_url);
    // The dead-letter consumer only reports a failed thumbnail job.
    expect(await runMediaJob({ type: "media.thumbnails", id: item.id }, {}, "relab-media-dlq")).toEqual({ acked: true, retried: false });
  });
});

describe("dead letters", () => {
  it("a scan that kept failing rejects the unpublished upload as unscanned and releases the quota (fail closed)", async () => {
    const { product } = await productWithComponent(owner.token);
    const usage = async () => ((await (await me(owner.token)).json()) as { upload_file_count: number }).upload_file_count;
    const before = await usage();
    const item = await uploaded(`/v1/products/${product}/files`, owner.token, text("never scanned\n"));
    expect(await usage()).toBe(before + 1);
    expect(await runMediaJob({ type: "media.scan", kind: "files", id: item.id }, {}, "relab-media-dlq")).toEqual({
      acked: true,
      retried: false,
    });
    expect(await usage()).toBe(before);
    const own = await api(`/v1/products/${product}/files/${item.id}`, { headers: bearer(owner.token) });
    expect(await own.json()).toMatchObject({ status: "rejected", rejected_reason: "unscanned" });
    await expectProblem(await api(`/v1/products/${product}/files/${item.id}`), 404, "NOT_FOUND");
    expect(await env.UPLOADS.head(`quarantine/files/${item.id}`)).toBeNull();
    // Delivered again (or a late scan), nothing changes: the quota is not released twice.
    expect(await runMediaJob({ type: "media.scan", kind: "files", id: item.id }, {}, "relab-media-dlq")).toEqual({
      acked: true,
      retried: false,
    });
    await scan("files", item.id);
    expect(await usage()).toBe(before);
  });
});

describe("the external scanner", () => {
  it("runs after the built-in one when configured: clean publishes, a positive rejects", async () => {
    const { product } = await productWithComponent(owner.token);
    const clean = await uploaded(`/v1/products/${product}/files`, owner.token, text("ordinary notes\n"));
    const positive = await uploaded(`/v1/products/${product}/files`, owner.token, text("EXTERNAL-SCANNER-POSITIVE\n"));
    for (const item of [clean, positive]) {
      expect(await runMediaJob({ type: "media.scan", kind: "files", id: item.id }, EXTERNAL_SCANNER_VARS)).toEqual({
        acked: true,
        retried: false,
      });
    }
    expect((await api(pathOf(clean.file_url!))).status).toBe(200);
    const own = await api(`/v1/products/${product}/files/${positive.id}`, { headers: bearer(owner.token) });
    expect(await own.json()).toMatchObject({ status: "rejected", rejected_reason: "malware" });
    await expectProblem(await api(pathOf(positive.file_url!)), 404, "NOT_FOUND");
  });

  it("a time-out or an error answer retries the scan and publishes nothing", async () => {
    const { product } = await productWithComponent(owner.token);
    for (const marker of ["EXTERNAL-SCANNER-SLOW", "EXTERNAL-SCANNER-BROKEN"]) {
      // No queue message: the real consumer, without the external scanner, would publish it meanwhile.
      const item = await pendingWithoutJob("files", product, owner.id, text(`${marker}\n`));
      expect(await runMediaJob({ type: "media.scan", kind: "files", id: item.id }, EXTERNAL_SCANNER_VARS)).toEqual({
        acked: false,
        retried: true,
      });
      const pending = (await (await api(`/v1/products/${product}/files/${item.id}`, { headers: bearer(owner.token) })).json()) as MediaItem;
      expect(pending.status).toBe("pending");
      await expectProblem(await api(pathOf(item.url)), 404, "NOT_FOUND");
    }
  });
});

describe("through the real queue", () => {
  it("an upload is scanned and thumbnailed by the queue consumer on its own", { timeout: 40_000 }, async () => {
    const { product } = await productWithComponent(owner.token);
    const item = await uploaded(`/v1/products/${product}/images`, owner.token, {
      bytes: encodeJpeg(400, 40, (x) => [x & 255, 90, 200]),
      name: "queued.jpg",
      type: "image/jpeg",
    });
    const key = keyOf(item.image_url!);
    let listed: MediaItem | undefined;
    for (let i = 0; i < 60; i++) {
      listed = ((await (await api(`/v1/products/${product}/images`)).json()) as { items: MediaItem[] }).items[0];
      if (listed && pathOf(listed.thumbnail_url!).includes("/thumbnails/")) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(listed?.id).toBe(item.id);
    expect(pathOf(listed!.thumbnail_url!)).toBe(`/uploads/images/thumbnails/200/${key}`);
  });
});
