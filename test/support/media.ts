import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../src/index";
import type { MediaMessage } from "../../src/services/media/messages";
import { bearer, postJson } from "./accounts";
import { api } from "./http";

/** A file part for an upload. */
export interface Part {
  bytes: Uint8Array;
  name: string;
  type: string;
}

/** POSTs a multipart upload with `file` and the optional text fields. */
export function upload(path: string, token: string | null, part: Part, fields: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  form.append("file", new File([part.bytes], part.name, { type: part.type }));
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return api(path, { method: "POST", headers: token ? bearer(token) : {}, body: form });
}

/** An image or file record as the API answers it. */
export interface MediaItem {
  id: string;
  filename: string;
  description: string | null;
  image_metadata?: Record<string, unknown> | null;
  image_url?: string;
  thumbnail_url?: string;
  file_url?: string;
  status: "pending" | "clean";
  created_at: string;
}

/** Uploads and expects 201; returns the record. */
export async function uploaded(path: string, token: string, part: Part, fields: Record<string, string> = {}): Promise<MediaItem> {
  const response = await upload(path, token, part, fields);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as MediaItem;
}

/** Runs one media-queue message through the consumer, as the queue would deliver it; returns the acks and retries. */
export async function runMediaJob(body: MediaMessage | unknown, vars: Record<string, string> = {}, queue = "relab-media") {
  const batch = createMessageBatch(queue, [{ id: `m-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...vars } as typeof env);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length === 1, retried: result.retryMessages.length === 1 };
}

/** Scans an upload (the job the upload queued), expecting it to be acknowledged. */
export async function scan(kind: "images" | "files", id: string): Promise<void> {
  expect(await runMediaJob({ type: "media.scan", kind, id })).toEqual({ acked: true, retried: false });
}

/** A base product owned by `token`'s user, with one component. */
export async function productWithComponent(token: string): Promise<{ product: number; component: number }> {
  const response = await postJson(
    "/v1/products",
    { name: "Camera body", components: [{ name: "Shutter", amount_in_parent: 1 }] },
    bearer(token),
  );
  expect(response.status, await response.clone().text()).toBe(201);
  const body = (await response.json()) as { id: number; components: { id: number }[] };
  return { product: body.id, component: body.components[0]!.id };
}

/** Sets a user's role directly (the admin route is tested elsewhere). */
export async function setRole(userId: number, role: "contributor" | "lab"): Promise<void> {
  await env.DB.prepare("UPDATE users SET role = ? WHERE id = ?").bind(role, userId).run();
}

/** The path of a served URL (`http://localhost/uploads/...` -> `/uploads/...`). */
export const pathOf = (url: string) => new URL(url).pathname;

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * An upload waiting for its scan, written straight to D1 and R2 with no queue message: the real
 * queue consumer (which runs beside the tests, with the default configuration) can then never
 * settle it while a test looks at it pending, or runs its own scan job with other variables.
 * `record` is the id of the base product or component it belongs to; like an upload, it charges
 * the uploader's quota (one file, its bytes), which a rejection releases.
 */
export async function pendingWithoutJob(
  kind: "images" | "files",
  record: number,
  uploadedBy: number,
  part: Part & { width?: number; height?: number },
): Promise<{ id: string; url: string }> {
  const id = hex(crypto.getRandomValues(new Uint8Array(16)));
  const extension = part.name.split(".").pop()!;
  const storageKey = `${hex(new Uint8Array(await crypto.subtle.digest("SHA-256", part.bytes)))}.${extension}`;
  await env.UPLOADS.put(`quarantine/${kind}/${id}`, part.bytes, { httpMetadata: { contentType: part.type } });
  const columns = "id, product_id, storage_key, filename, content_type, size_bytes, status, uploaded_by";
  const values = [id, record, storageKey, part.name, part.type, part.bytes.length, "pending", uploadedBy];
  const statement =
    kind === "images"
      ? env.DB.prepare(`INSERT INTO images (${columns}, width, height) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).bind(
          ...values,
          part.width ?? 1,
          part.height ?? 1,
        )
      : env.DB.prepare(`INSERT INTO files (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).bind(...values);
  const charge = env.DB.prepare(
    "UPDATE users SET upload_file_count = upload_file_count + 1, upload_total_bytes = upload_total_bytes + ? WHERE id = ?",
  ).bind(part.bytes.length, uploadedBy);
  await env.DB.batch([statement, charge]);
  return { id, url: `http://localhost/uploads/${kind}/${storageKey}` };
}
