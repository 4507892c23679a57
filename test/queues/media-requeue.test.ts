import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import worker from "../../src/index";
import { createLogger } from "../../src/lib/logger";
import { notFound } from "../../src/lib/problem";
import { REQUEUE_AFTER_SECONDS, requeueStrandedMedia } from "../../src/queues/media-requeue";
import { insertMedia, type MediaParent } from "../../src/services/media/media";
import { type MediaKind, quarantineKey } from "../../src/services/media/storage";
import { prepareFile, prepareImage } from "../../src/services/media/upload";
import { bearer, me, verifiedUser } from "../support/accounts";
import { api } from "../support/http";
import { encodeJpeg } from "../support/image-fixtures";
import { type MediaItem, pathOf, productWithComponent, setRole } from "../support/media";

// An upload acknowledged just before a crash: its row and quarantined bytes are stored, its
// `media.scan` message never sent (a crash between the insert and MEDIA_QUEUE.send in
// src/services/media/intake.ts, or a message lost with the queue's state). Only the Cron Trigger
// can settle it.

let owner: { id: number; token: string };

beforeAll(async () => {
  const user = await verifiedUser("stranded");
  owner = { id: user.id, token: user.tokens.access_token };
  await setRole(owner.id, "lab");
});

const parentOf = (id: number): MediaParent => ({ id, kind: "product", missing: () => notFound("No base product has this id.") });

/** Stores an upload the way storeUpload does (bytes in quarantine, then the row and its quota charge) and stops before queueing its scan. */
async function strandedUpload(product: number, kind: MediaKind, file: File): Promise<string> {
  const form = { file, filename: file.name, description: null, metadata: null };
  const prepared = kind === "images" ? await prepareImage(form, "lab") : await prepareFile(form);
  const id = crypto.randomUUID().replaceAll("-", "");
  await env.UPLOADS.put(quarantineKey(kind, id), prepared.bytes, { httpMetadata: { contentType: prepared.contentType } });
  const { db } = createDb(env.DB);
  await insertMedia({ db }, parentOf(product), kind, {
    id,
    storageKey: prepared.storageKey,
    filename: prepared.filename,
    contentType: prepared.contentType,
    sizeBytes: prepared.bytes.length,
    description: null,
    uploadedBy: owner.id,
    image: prepared.image,
  });
  return id;
}

const jpegFile = (bytes: Uint8Array, name = "photo.jpg") => new File([bytes], name, { type: "image/jpeg" });

async function usage(): Promise<[number, number]> {
  const body = (await (await me(owner.token)).json()) as { upload_file_count: number; upload_total_bytes: number };
  return [body.upload_file_count, body.upload_total_bytes];
}

async function item(product: number, kind: MediaKind, id: string): Promise<MediaItem> {
  const response = await api(`/v1/products/${product}/${kind}/${id}`, { headers: bearer(owner.token) });
  expect(response.status).toBe(200);
  return (await response.json()) as MediaItem;
}

/** Runs the Worker's `scheduled` handler as the Cron Trigger would, at `at` (ms). */
async function cron(at: number): Promise<void> {
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), env);
}

/** Polls the owner's view of the item until it leaves `pending` (the real queue consumer runs in batches of up to 5 s). */
async function settled(product: number, kind: MediaKind, id: string): Promise<MediaItem> {
  for (let i = 0; i < 60; i++) {
    const current = await item(product, kind, id);
    if (current.status !== "pending") return current;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${kind}/${id} stayed pending`);
}

describe("the Cron Trigger settles uploads whose scan message was lost", () => {
  it("a stranded image and file end clean and served", { timeout: 60_000 }, async () => {
    const { product } = await productWithComponent(owner.token);
    const before = await usage();
    const image = await strandedUpload(product, "images", jpegFile(encodeJpeg(400, 200, (x, y) => [x & 255, y & 255, 77])));
    const file = await strandedUpload(product, "files", new File(["a,b\n1,2\n"], "table.csv", { type: "text/csv" }));
    expect((await item(product, "images", image)).status).toBe("pending");
    expect((await usage())[0]).toBe(before[0] + 2);

    await cron(Date.now() + (REQUEUE_AFTER_SECONDS + 60) * 1000);
    const settledImage = await settled(product, "images", image);
    const settledFile = await settled(product, "files", file);
    expect(settledImage).toMatchObject({ status: "clean", rejected_reason: null });
    expect(settledFile).toMatchObject({ status: "clean", rejected_reason: null });
    expect((await api(pathOf(settledImage.image_url!))).status).toBe(200);
    expect(pathOf(settledImage.thumbnail_url!)).toMatch(/^\/uploads\/images\/thumbnails\/200\//);
    expect((await api(pathOf(settledImage.thumbnail_url!))).status).toBe(200);
    expect((await api(pathOf(settledFile.file_url!))).status).toBe(200);
    const listed = (await (await api(`/v1/products/${product}/images`)).json()) as { items: MediaItem[] };
    expect(listed.items.map((i) => i.id)).toEqual([image]);
    expect(await env.UPLOADS.head(quarantineKey("images", image))).toBeNull();
    expect((await usage())[0]).toBe(before[0] + 2);
  });

  it("a stranded image that cannot be decoded ends rejected, unserved, its quota released", { timeout: 60_000 }, async () => {
    const { product } = await productWithComponent(owner.token);
    const before = await usage();
    const whole = encodeJpeg(64, 64, (x, y) => [(x * 37) & 255, (y * 53) & 255, 9], { quality: 95 });
    const truncated = Uint8Array.from([...whole.subarray(0, Math.floor(whole.length * 0.6)), 0xff, 0xd9]);
    const image = await strandedUpload(product, "images", jpegFile(truncated));
    expect((await usage())[0]).toBe(before[0] + 1);

    await cron(Date.now() + (REQUEUE_AFTER_SECONDS + 60) * 1000);
    const rejected = await settled(product, "images", image);
    expect(rejected).toMatchObject({ status: "rejected", rejected_reason: "undecodable" });
    expect((await api(pathOf(rejected.image_url!))).status).toBe(404);
    expect(await usage()).toEqual(before);
  });
});

describe("requeueStrandedMedia", () => {
  const log = createLogger({}, () => {});

  it("takes only uploads pending for the interval, oldest first, at most `limit` a run, each once per interval", async () => {
    const { product } = await productWithComponent(owner.token);
    const csv = (n: number) => new File([`n\n${n}\n`], `t${n}.csv`, { type: "text/csv" });
    const ids = [];
    for (let n = 0; n < 4; n++) ids.push(await strandedUpload(product, "files", csv(n)));
    const [oldest, older, old, young] = ids as [string, string, string, string];
    const now = Math.floor(Date.now() / 1000);
    const age = async (id: string, seconds: number) =>
      env.DB.prepare("UPDATE files SET updated_at = ? WHERE id = ?")
        .bind(now - seconds, id)
        .run();
    await age(oldest, 3000);
    await age(older, 2000);
    await age(old, REQUEUE_AFTER_SECONDS);
    await age(young, REQUEUE_AFTER_SECONDS - 1);
    const { db } = createDb(env.DB);

    expect(await requeueStrandedMedia({ db, bindings: env, log }, now, 2)).toEqual({ images: [], files: [oldest, older] });
    expect(await requeueStrandedMedia({ db, bindings: env, log }, now, 2)).toEqual({ images: [], files: [old] });
    expect(await requeueStrandedMedia({ db, bindings: env, log }, now, 2)).toEqual({ images: [], files: [] });
    expect((await requeueStrandedMedia({ db, bindings: env, log }, now + 1, 2)).files).toEqual([young]);
  });

  it("finds pending rows through the partial index, not by scanning the table", async () => {
    for (const kind of ["images", "files"]) {
      const plan = await env.DB.prepare(
        `EXPLAIN QUERY PLAN SELECT id FROM ${kind} WHERE status = 'pending' AND updated_at <= ? ORDER BY updated_at LIMIT 100`,
      )
        .bind(0)
        .all<{ detail: string }>();
      expect(plan.results.map((row) => row.detail).join("; ")).toMatch(new RegExp(`USING (COVERING )?INDEX ${kind}_pending_idx`));
    }
  });
});
