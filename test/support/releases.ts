import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { components } from "../../clients/typescript/schema";
import worker from "../../src/index";
import type { ReleaseMessage } from "../../src/services/releases/messages";
import { bearer, postJson, verifiedUser } from "./accounts";
import { csvRecords } from "./csv";
import { api, ORIGIN } from "./http";
import { bootstrapAdmin } from "./mfa";

// Helpers of the dataset-release tests (test/routes/releases/*).

/** A release as the API answers it: the schema's own type, from the generated client. */
export type ReleaseBody = components["schemas"]["Release"];

/** The bootstrap superuser's bearer headers (TOTP enrolled once per test file). */
export async function adminHeaders(): Promise<Record<string, string>> {
  return bearer((await bootstrapAdmin()).tokens.access_token);
}

/** A verified contributor; with `consent`, one who accepted the current contributor terms. */
export async function contributor(prefix: string, consent: boolean) {
  const user = await verifiedUser(prefix);
  if (consent) {
    const accepted = await postJson("/v1/users/me/contributor-terms", { version: 1 }, bearer(user.tokens.access_token));
    expect(accepted.status, await accepted.clone().text()).toBe(200);
  }
  return { ...user, headers: bearer(user.tokens.access_token) };
}

/** A material or product type straight into the database (their admin routes are tested elsewhere). */
export async function referenceRow(table: "materials" | "product_types", name: string): Promise<number> {
  const row = await env.DB.prepare(`INSERT INTO ${table} (name) VALUES (?) RETURNING id`).bind(name).first<{ id: number }>();
  return row!.id;
}

/** Creates a base product (with nested components and bills of materials) and returns its body. */
export async function createProduct(headers: Record<string, string>, body: unknown): Promise<{ id: number; components: { id: number }[] }> {
  const response = await postJson("/v1/products", body, headers);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: number; components: { id: number }[] };
}

export function requestRelease(headers: Record<string, string>, body: unknown): Promise<Response> {
  return postJson("/v1/admin/releases", body, headers);
}

export async function readRelease(version: string, headers: Record<string, string> = {}): Promise<Response> {
  return api(`/v1/releases/${version}`, { headers });
}

/** Polls a release (as a superuser) until it leaves `building`; the real queue builds it meanwhile. */
export async function settledRelease(version: string, headers: Record<string, string>, timeoutMs = 60_000): Promise<ReleaseBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await readRelease(version, headers);
    expect(response.status).toBe(200);
    const body = (await response.json()) as ReleaseBody;
    if (body.status !== "building") return body;
    if (Date.now() > deadline) throw new Error(`release ${version} still building after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The path of a served URL. */
export const pathOf = (url: string) => new URL(url).pathname;

/** A file of a release, as bytes (expects 200). */
export async function fileBytes(version: string, path: string, headers: Record<string, string> = {}): Promise<Uint8Array> {
  const response = await api(`/v1/releases/${version}/files/${path}`, { headers });
  expect(response.status, `${path}: ${response.status}`).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

export async function fileText(version: string, path: string): Promise<string> {
  return new TextDecoder().decode(await fileBytes(version, path));
}

/** A CSV table of a release as objects keyed by its header. */
export async function csvTable(version: string, path: string): Promise<Record<string, string>[]> {
  return csvRecords(await fileText(version, path));
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A `fetch` for hyparquet that goes to the Worker under test (as a browser's or DuckDB's would go
 * over the network), recording each request's method, Range header and status.
 */
export function workerFetch(log: { method: string; range: string | null; status: number }[]) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(new URL(String(input), ORIGIN), init);
    const response = await exports.default.fetch(request);
    log.push({ method: request.method, range: request.headers.get("range"), status: response.status });
    return response;
  };
}

/**
 * Runs one slice of a release's build through the queue consumer, as the queue would deliver its
 * message, with `vars` changing the configuration (a slice length, say). Returns whether the
 * message was acknowledged. A slice that runs out of time queues the next slice on the real queue.
 */
export async function runReleaseSlice(version: string, buildId: string, vars: Record<string, string> = {}) {
  return runReleaseMessage({ type: "release.build", version, build_id: buildId }, vars);
}

/** Delivers one message of the release queue to its consumer (as `runReleaseSlice`), whatever its type. */
export async function runReleaseMessage(body: ReleaseMessage, vars: Record<string, string> = {}) {
  const batch = createMessageBatch("relab-releases", [{ id: `r-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...vars } as typeof env);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length === 1, retried: result.retryMessages.length === 1 };
}

/** The release row's build id and state, read from the database (not part of the API). */
export async function buildRow(version: string) {
  return env.DB.prepare("SELECT build_id, build_state, lease_id, lease_until, snapshot_at, status FROM releases WHERE version = ?")
    .bind(version)
    .first<{
      build_id: string;
      build_state: string | null;
      lease_id: string | null;
      lease_until: number | null;
      snapshot_at: number | null;
      status: string;
    }>();
}

/** Every key under a prefix of the bucket. */
export async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const listing = await env.UPLOADS.list({ prefix, ...(cursor ? { cursor } : {}) });
    keys.push(...listing.objects.map((o) => o.key));
    cursor = listing.truncated ? listing.cursor : undefined;
  } while (cursor);
  return keys.sort();
}

/** The release's rows in the four staging tables, in all. */
export async function stagedRows(version: string): Promise<number> {
  const row = await env.DB.prepare(
    `SELECT (SELECT count(*) FROM release_records WHERE release_version = ?1) + (SELECT count(*) FROM release_record_materials WHERE release_version = ?1)
      + (SELECT count(*) FROM release_images WHERE release_version = ?1) + (SELECT count(*) FROM release_reference_rows WHERE release_version = ?1) AS n`,
  )
    .bind(version)
    .first<{ n: number }>();
  return row!.n;
}

/**
 * Runs `sql` in DuckDB (Node side, test/support/duckdb-bridge.ts) over `files`, each readable at
 * `{dir}/<name>` in the query; returns DuckDB's rows as JSON (big integers as strings).
 */
export async function duckdb(files: Record<string, Uint8Array>, sql: string): Promise<Record<string, unknown>[]> {
  const encoded: Record<string, string> = {};
  for (const [name, bytes] of Object.entries(files)) {
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    encoded[name] = btoa(binary);
  }
  const response = await fetch("https://duckdb.test/query", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ files: encoded, sql }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`DuckDB: ${text}`);
  return JSON.parse(text) as Record<string, unknown>[];
}

/**
 * Runs build slices of a release until its snapshot is taken (a snapshot is several units of work:
 * its instant, a batch per slice of base products, the counts); returns the slices it took.
 */
export async function untilSnapshotTaken(version: string, slice: () => Promise<{ kind: string }>, maxSlices = 100): Promise<number> {
  for (let slices = 1; slices <= maxSlices; slices++) {
    expect((await slice()).kind).toBe("continue");
    if ((await buildRow(version))?.snapshot_at !== null) return slices;
  }
  throw new Error(`the snapshot of release ${version} was not taken in ${maxSlices} slices`);
}
