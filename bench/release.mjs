// The release section of `npm run bench` (bench/README.md, Releases): dataset releases of the
// 10,000-product demo dataset built through the API and the real release queue, timed from the
// POST to the publication, against the raw speed of reading the same rows from the same SQLite
// file in Node; then the same build in Node (bundled from src/, against Miniflare's D1 and R2) for
// its peak memory at two dataset sizes.
import { spawnSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { build } from "esbuild";
import { demoStatements } from "../scripts/seed/demo-data.mjs";
import { findSqlite } from "./export.mjs";
import { QueueLog } from "./media.mjs";
import { rssKiB, sampleMemory, workerdPids } from "./memory.mjs";
import { applyMigrations, BOOTSTRAP, probe, startApp } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
export const RELEASE_PRODUCTS = 10_000;
/** Dataset sizes of the Node-side memory measurement: memory must not grow with the dataset. */
const MEMORY_PRODUCTS = [2_500, 10_000];
const EDGE_HEADERS = { "cf-connecting-ip": "10.9.0.3" };
// Locally a poll waits while a queue invocation of the isolate runs (bench/README.md, Releases), so
// the poll sent during a build is answered when the publishing slice ends; polls every 50 ms keep
// the granularity at the end small all the same (250 ms added 125 ms on average).
const POLL_MS = 50;
const BUILD_TIMEOUT_MS = 600_000;
const MiB = 2 ** 20;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// HTTP: the bootstrap superuser with TOTP (the admin routes need it), then one build per round.

function base32Decode(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of text.replace(/=+$/, "").toUpperCase()) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 (HMAC-SHA-1, 6 digits, 30 s), as an authenticator app computes it. */
function totp(secret, at = Date.now()) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / 30)));
  const mac = createHmac("sha1", base32Decode(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 15;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

async function call(url, method, p, { token, json, form } = {}) {
  const headers = { ...EDGE_HEADERS };
  if (token) headers.authorization = `Bearer ${token}`;
  let body;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(form).toString();
  }
  const send = () => fetch(url + p, { method, headers, body, signal: AbortSignal.timeout(60_000) });
  // workerd may close a kept-alive connection just as it is reused ("other side closed"): a GET
  // that got no answer is safe to send again, once, on a new connection.
  const response = await send().catch((error) => (method === "GET" ? send() : Promise.reject(error)));
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

async function expectStatus(promise, what, status) {
  const response = await promise;
  if (response.status !== status)
    throw new Error(`release: ${what} answered ${response.status}, expected ${status}: ${response.text.slice(0, 300)}`);
  return response;
}

/**
 * Signs the bootstrap superuser in and enrols TOTP; returns the new session's access token and the
 * recovery codes (each one a step-up's second factor, once).
 */
export async function adminSession(url) {
  const login = (
    await expectStatus(
      call(url, "POST", "/v1/auth/bearer/login", { form: { username: BOOTSTRAP.email, password: BOOTSTRAP.password } }),
      "admin login",
      200,
    )
  ).json();
  const setup = (await expectStatus(call(url, "POST", "/v1/auth/mfa/totp/setup", { token: login.access_token }), "TOTP setup", 200)).json();
  const confirmed = await expectStatus(
    call(url, "POST", "/v1/auth/mfa/totp/confirm", {
      token: login.access_token,
      json: { setup_token: setup.setup_token, code: totp(setup.secret), current_password: BOOTSTRAP.password },
    }),
    "TOTP confirm",
    200,
  );
  const body = confirmed.json();
  return { token: body.tokens.access_token, recoveryCodes: [...body.recovery_codes] };
}

/** Signs the bootstrap superuser in and enrols TOTP; returns the new session's access token. */
async function adminToken(url) {
  return (await adminSession(url)).token;
}

/**
 * One release, from the POST to its publication: wall time, the queue consumer's invocations for
 * it (Miniflare's broker logs each with its duration), workerd's RSS sampled every 5 ms, and the
 * progress (`records_written`) seen while polling.
 */
async function buildOnce(app, pid, queueLog, token, version) {
  const batchesBefore = queueLog.batches.length;
  const rssBefore = pid ? rssKiB(pid) : null;
  const stop = pid ? sampleMemory(pid) : () => null;
  const started = performance.now();
  const progress = [];
  let release;
  let rssPeak;
  try {
    await expectStatus(
      call(app.url, "POST", "/v1/admin/releases", { token, json: { version, title: `Bench release ${version}` } }),
      "POST /v1/admin/releases",
      202,
    );
    for (;;) {
      release = (await expectStatus(call(app.url, "GET", `/v1/releases/${version}`, { token }), "GET release", 200)).json();
      progress.push({ ms: Math.round(performance.now() - started), recordsWritten: release.progress.records_written });
      if (release.status !== "building") break;
      if (performance.now() - started > BUILD_TIMEOUT_MS)
        throw new Error(`release: ${version} still building after ${BUILD_TIMEOUT_MS / 1000} s`);
      await sleep(POLL_MS);
    }
  } finally {
    rssPeak = stop();
  }
  const ms = performance.now() - started;
  if (release.status !== "published") throw new Error(`release: ${version} ended ${release.status}: ${release.failure_reason}`);
  const logged = (msg) =>
    app.logTail
      .map((line) => {
        try {
          return JSON.parse(line);
        } catch {
          return null;
        }
      })
      .find((entry) => entry?.msg === msg && entry.release === version);
  // The publishing slice queued the clean-up of the staging rows, a message of its own: waited for
  // here (not timed as part of the build), so that the next build does not find its rows.
  let cleanup = logged("release staging rows removed");
  for (let i = 0; i < 300 && !cleanup; i++) {
    await sleep(100);
    cleanup = logged("release staging rows removed");
  }
  if (!cleanup) process.stderr.write(`release: the staging clean-up of ${version} was not seen within 30 s\n`);
  // The broker logs a batch once the consumer has returned, which can be just after the poll saw
  // the release published; the last batch is the clean-up.
  const batches = () => queueLog.batches.slice(batchesBefore).filter((b) => b.queue === "relab-releases");
  for (let i = 0; i < 50 && batches().length < 2; i++) await sleep(100);
  const slices = batches().slice(0, -1);
  if (slices.length === 0)
    process.stderr.write(`release: no queue batch logged for ${version}; last Miniflare lines:\n${queueLog.lines.slice(-6).join("\n")}\n`);
  // The build's own account of its steps (the "release published" log line), in ms.
  const published = logged("release published");
  const total = release.counts.records;
  return {
    version,
    ms,
    consumerMs: slices.reduce((sum, b) => sum + b.ms, 0),
    slices: slices.length,
    rssBeforeKiB: rssBefore,
    rssPeakKiB: rssPeak,
    rssGrowthKiB: rssPeak === null ? null : rssPeak - rssBefore,
    // Polls that saw the records table part-written: progress is visible while it builds.
    progressSeen: progress.filter((p) => p.recordsWritten > 0 && p.recordsWritten < total).length,
    progress: progress.map((p) => [p.ms, p.recordsWritten]),
    stepMs: published?.step_ms ?? null,
    cleanupMs: cleanup?.ms ?? null,
    release,
  };
}

/** Reads the first release back: the CSV's records and the Parquet footer's row count. */
async function checkRelease(app, release) {
  const records = release.counts.records;
  const csv = await fetch(`${app.url}/v1/releases/${release.version}/files/records.csv`, { headers: EDGE_HEADERS });
  const text = await csv.text();
  const lines = text.split("\r\n").length - 2;
  if (lines !== records) throw new Error(`release: records.csv holds ${lines} records, the release counts ${records}`);
  const parquet = new Uint8Array(
    await (await fetch(`${app.url}/v1/releases/${release.version}/files/records.parquet`, { headers: EDGE_HEADERS })).arrayBuffer(),
  );
  const { parquetMetadata } = await import("hyparquet");
  const metadata = parquetMetadata(parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength));
  if (Number(metadata.num_rows) !== records)
    throw new Error(`release: records.parquet holds ${metadata.num_rows} rows, the release counts ${records}`);
  return { csvMiB: +(text.length / MiB).toFixed(1), parquetMiB: +(parquet.length / MiB).toFixed(1), rowGroups: metadata.row_groups.length };
}

// ---------------------------------------------------------------------------------------------
// Raw reads: what the build reads, as plain queries over the same SQLite file with sql.js.

// The snapshot's selection (src/services/releases/snapshot.ts): base products of owners who accepted
// the terms, every component below them, their bills of materials, their clean images; plus the
// reference tables. Every row stepped and read into JS values; no Worker, no staging, no formats.
const TREE = `WITH RECURSIVE tree(id, owner_id) AS (
    SELECT p.id, p.owner_id FROM products p JOIN users u ON u.id = p.owner_id WHERE p.parent_id IS NULL AND u.terms_accepted_version >= 1
    UNION ALL SELECT c.id, tree.owner_id FROM tree JOIN products c ON c.parent_id = tree.id)`;
const RAW_QUERIES = {
  records: `${TREE} SELECT p.id, p.parent_id, p.amount_in_parent, tree.owner_id, p.name, p.description, p.brand, p.model, p.product_type_id,
    p.weight_g, p.height_cm, p.width_cm, p.depth_cm, p.volume_cm3, p.circularity_properties, p.created_at, p.updated_at
    FROM tree JOIN products p ON p.id = tree.id ORDER BY p.id`,
  record_materials: `${TREE} SELECT b.product_id, b.material_id, b.quantity, b.unit FROM tree JOIN bill_of_materials b ON b.product_id = tree.id
    ORDER BY b.product_id, b.material_id`,
  images: `${TREE} SELECT i.storage_key, i.product_id, i.width, i.height, i.size_bytes, i.content_type FROM tree JOIN images i ON i.product_id = tree.id
    WHERE i.status = 'clean'`,
  reference: `SELECT * FROM taxonomies UNION ALL SELECT id, name, NULL, NULL, NULL, NULL, NULL, NULL FROM categories
    UNION ALL SELECT id, name, NULL, NULL, NULL, NULL, NULL, NULL FROM materials UNION ALL SELECT id, name, NULL, NULL, NULL, NULL, NULL, NULL FROM product_types`,
};

/** The raw reads, each query once unrecorded (page cache, statement compile) and `rounds` times timed (median). */
async function rawReads(file, rounds) {
  const require = createRequire(import.meta.url);
  const SQL = await require("sql.js")();
  const db = new SQL.Database(readFileSync(file));
  try {
    const timed = {};
    for (const [name, query] of Object.entries(RAW_QUERIES)) {
      const runs = [];
      for (let r = 0; r < rounds + 1; r++) {
        const started = performance.now();
        const statement = db.prepare(query);
        let rows = 0;
        while (statement.step()) {
          statement.get();
          rows += 1;
        }
        statement.free();
        if (r > 0) runs.push({ ms: performance.now() - started, rows });
      }
      timed[name] = { rows: runs[0].rows, ms: median(runs.map((run) => run.ms)) };
    }
    return timed;
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Node: the build's own memory. A child process starts a Miniflare instance of its own (D1 and R2
// in memory, no Worker code), loads the demo dataset, and runs the build's slices
// (src/services/releases/build.ts, bundled for Node) against those bindings until the release is
// published, sampling heapUsed + external every 2 ms.

// Sampled every 2 ms and after every slice (hyparquet-writer checks `instanceof Uint8Array`, so
// the typed-array constructors cannot be wrapped here as bench/media.mjs does): a peak inside one
// synchronous stretch shorter than that can be missed, which the peak RSS (VmHWM) does not.
export const PROBE = `
const state = { peak: 0, at: null };
globalThis.__releaseMemory = state;
globalThis.__releaseSample = () => {
  const m = process.memoryUsage();
  const v = m.heapUsed + m.external;
  if (v > state.peak) { state.peak = v; state.at = m; }
};
`;

export const CHILD = `
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { Miniflare } = await import(pathToFileURL(spec.miniflare).href);
const lib = await import(pathToFileURL(spec.lib).href);
const status = (field) => Number(new RegExp(field + ":\\\\s+(\\\\d+) kB").exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
// An R2 stand-in in this process that keeps small objects and only counts multipart parts: what
// the build holds is then the build's own memory, not the proxy's copies of the bytes in flight.
function memoryBucket() {
  const objects = new Map();
  const uploads = new Map();
  let next = 1;
  const upload = (key, uploadId) => ({
    uploadId,
    async uploadPart(partNumber, value) { uploads.get(uploadId).size += value.length; return { partNumber, etag: "p" + partNumber }; },
    async complete() { const size = uploads.get(uploadId).size; objects.set(key, new Uint8Array(0)); return { size }; },
    async abort() { uploads.delete(uploadId); },
  });
  return {
    async put(key, value) { objects.set(key, value.length < 1 << 20 ? value.slice() : new Uint8Array(0)); return { size: value.length }; },
    async get(key) { const v = objects.get(key); return v ? { arrayBuffer: async () => v.slice().buffer } : null; },
    async delete(keys) { for (const k of [keys].flat()) objects.delete(k); },
    async list({ prefix }) { return { objects: [...objects.keys()].filter((k) => k.startsWith(prefix)).map((key) => ({ key })), truncated: false }; },
    async createMultipartUpload(key) { const id = "u" + next++; uploads.set(id, { size: 0 }); return upload(key, id); },
    resumeMultipartUpload(key, id) { return upload(key, id); },
  };
}
const mf = new Miniflare({ modules: true, script: "export default { fetch() { return new Response(null) } }", compatibilityDate: spec.compatibilityDate,
  d1Databases: { DB: "release-memory" } });
try {
  const d1 = await mf.getD1Database("DB");
  const bucket = memoryBucket();
  for (const queries of spec.migrations) await d1.batch(queries.map((q) => d1.prepare(q)));
  await d1.batch(spec.seed.map((q) => d1.prepare(q)));
  // The seed's SQL (tens of MB of text) is not the build's: let it go before the baseline.
  spec.seed = null;
  spec.migrations = null;
  await d1.prepare("INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES ('1.0', 'Memory', 'CC-BY-4.0', 'building', 'http://localhost', 'memory')").run();
  const config = lib.loadConfig(spec.env);
  const log = { info() {}, warn(msg, fields) { console.error(msg, fields?.error ?? ""); }, error(msg, fields) { console.error(msg, fields?.error ?? ""); }, child() { return log; } };
  const deps = () => ({ db: lib.createDb(d1).db, config, log, bindings: { UPLOADS: bucket } });
  for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 50)); }
  const m0 = process.memoryUsage();
  const base = m0.heapUsed + m0.external;
  let hwm = true;
  try { writeFileSync("/proc/self/clear_refs", "5"); } catch { hwm = false; }
  const rss0 = status("VmRSS");
  const state = globalThis.__releaseMemory;
  state.peak = 0;
  // "peak": sampled every 2 ms, garbage included; "retained": a forced GC before every sample (every 25 ms).
  const timer = spec.mode === "retained"
    ? setInterval(() => { globalThis.gc(); globalThis.__releaseSample(); }, 25)
    : setInterval(globalThis.__releaseSample, 2);
  const started = performance.now();
  const outcomes = [];
  for (;;) {
    const outcome = await lib.runBuildSlice(deps(), { version: "1.0", buildId: "memory" }, { deadline: Date.now() + spec.sliceMs });
    globalThis.__releaseSample();
    outcomes.push(outcome.kind);
    if (outcome.kind !== "continue") break;
  }
  const ms = performance.now() - started;
  clearInterval(timer);
  globalThis.__releaseSample();
  const row = await d1.prepare("SELECT status, records, failure_reason FROM releases WHERE version = '1.0'").first();
  if (row.status !== "published") throw new Error("the build ended " + row.status + ": " + row.failure_reason + " (" + outcomes.join(",") + ")");
  const at = state.at;
  process.stdout.write(JSON.stringify({
    records: row.records, ms, slices: outcomes.length,
    peakAboveStartBytes: state.peak - base,
    atPeak: { heapUsed: at.heapUsed - m0.heapUsed, external: at.external - m0.external, arrayBuffers: at.arrayBuffers - m0.arrayBuffers },
    rssPeakAboveStartKiB: hwm ? status("VmHWM") - rss0 : null,
    baseline: { heapUsed: m0.heapUsed, external: m0.external },
  }) + "\\n");
} finally {
  await mf.dispose();
}
`;

/** The old-space cap of the capped run: a Worker isolate has 128 MB for everything, so half of it. */
export const NODE_HEAP_CAP_MIB = 64;

/**
 * The build of `products` demo products in Node, three times in fresh processes: uncapped (time,
 * and the peak with the garbage V8 lets pile up while it has room), with the old space capped at
 * NODE_HEAP_CAP_MIB (it must finish; its peak is what an isolate under a memory limit would hold),
 * and with a forced GC before every sample ("retained": what the build keeps).
 */
export async function measureInNode(dir, products, compatibilityDate) {
  const lib = path.join(dir, "release-lib.mjs");
  if (!existsSync(lib)) {
    await build({
      stdin: {
        contents: [
          `export { runBuildSlice } from ${JSON.stringify(path.join(ROOT, "src/services/releases/build.ts"))};`,
          `export { createDb } from ${JSON.stringify(path.join(ROOT, "src/db/client.ts"))};`,
          `export { loadConfig } from ${JSON.stringify(path.join(ROOT, "src/config.ts"))};`,
        ].join("\n"),
        resolveDir: ROOT,
        loader: "ts",
      },
      bundle: true,
      format: "esm",
      platform: "node",
      logLevel: "error",
      inject: [path.join(dir, "probe.mjs")],
      outfile: lib,
    });
  }
  const migrations = (await readD1Migrations(path.join(ROOT, "migrations"))).filter((m) => m.queries.length > 0).map((m) => m.queries);
  const spec = {
    lib,
    miniflare: createRequire(import.meta.url).resolve("miniflare"),
    compatibilityDate,
    migrations,
    seed: demoStatements({ products, seed: 1 }),
    sliceMs: 60_000,
    env: {
      ENVIRONMENT: "development",
      AUTH_TOKEN_SECRET: "x".repeat(64),
      DATA_ENCRYPTION_KEY: "1".repeat(64),
      APP_PUBLIC_URL: "http://localhost:8081",
    },
  };
  const run = (mode, heapMiB = null) => {
    const specFile = path.join(dir, `spec-${products}-${mode}.json`);
    writeFileSync(specFile, JSON.stringify({ ...spec, mode }));
    const child = spawnSync(
      process.execPath,
      ["--expose-gc", ...(heapMiB ? [`--max-old-space-size=${heapMiB}`] : []), path.join(dir, "child.mjs"), specFile],
      {
        encoding: "utf8",
        env: { ...process.env, MALLOC_MMAP_THRESHOLD_: "65536", MALLOC_TRIM_THRESHOLD_: "65536" },
        maxBuffer: 1 << 20,
      },
    );
    if (child.status !== 0)
      throw new Error(
        `release: Node build of ${products} products (${mode}) failed: ${(child.stderr || child.stdout).trim().split("\n").slice(-20).join("\n")}`,
      );
    return JSON.parse(child.stdout.trim().split("\n").pop());
  };
  const uncapped = run("peak");
  const capped = run("peak", NODE_HEAP_CAP_MIB);
  const retained = run("retained");
  const toMiB = (bytes) => +(bytes / MiB).toFixed(1);
  const atPeak = (r) => Object.fromEntries(Object.entries(r.atPeak).map(([k, v]) => [k, toMiB(v)]));
  return {
    products,
    records: uncapped.records,
    ms: Math.round(uncapped.ms),
    recordsPerSecond: Math.round(uncapped.records / (uncapped.ms / 1000)),
    baselineMiB: { heapUsed: toMiB(capped.baseline.heapUsed), external: toMiB(capped.baseline.external) },
    uncapped: {
      peakAboveStartMiB: toMiB(uncapped.peakAboveStartBytes),
      atPeakMiB: atPeak(uncapped),
      rssPeakAboveStartMiB: uncapped.rssPeakAboveStartKiB === null ? null : +(uncapped.rssPeakAboveStartKiB / 1024).toFixed(1),
    },
    capped: {
      heapCapMiB: NODE_HEAP_CAP_MIB,
      ms: Math.round(capped.ms),
      peakAboveStartMiB: toMiB(capped.peakAboveStartBytes),
      atPeakMiB: atPeak(capped),
      rssPeakAboveStartMiB: capped.rssPeakAboveStartKiB === null ? null : +(capped.rssPeakAboveStartKiB / 1024).toFixed(1),
    },
    retained: { aboveStartMiB: toMiB(retained.peakAboveStartBytes), atPeakMiB: atPeak(retained) },
  };
}

// ---------------------------------------------------------------------------------------------

/** The slice length of the sliced build: the default (60 s) builds the demo dataset in one invocation. */
const SLICED_MS = 1_000;

/**
 * Starts `app-release` (D1 and R2 in files on /dev/shm, the release queue's consumer attached),
 * loads the demo dataset, builds one unrecorded and `rounds` timed releases through the API (the
 * first checked), then, on `app-release-sliced` (the same files, RELEASE_BUILD_SLICE_MS=1000), one
 * build in slices whose progress the polls see; reads the same rows from the SQLite file; and
 * measures the build's memory in Node.
 */
export async function runReleaseBench({ config, bundle, port, viaEntry, doStorage, rounds, log }) {
  const base = existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const persist = mkdtempSync(path.join(base, "relab-bench-release-"));
  const dir = mkdtempSync(path.join(os.tmpdir(), "relab-bench-release-node-"));
  const queueLog = new QueueLog();
  // Both instances use the same secrets, so that the superuser's session and TOTP carry over.
  const secrets = { AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"), DATA_ENCRYPTION_KEY: randomBytes(32).toString("hex") };
  const start = async (name, vars) => {
    const before = new Set(workerdPids());
    const started = await startApp(config, bundle, port, viaEntry, {
      name,
      doStorage,
      vars: { ...secrets, ...vars },
      miniflare: {
        d1Persist: path.join(persist, "d1"),
        r2Persist: path.join(persist, "r2"),
        queueProducers: { MEDIA_QUEUE: "relab-media", RELEASE_QUEUE: "relab-releases" },
        // As wrangler.jsonc: batches of one.
        queueConsumers: { "relab-releases": { maxBatchSize: 1, maxBatchTimeout: 1, maxRetries: 3 } },
        log: queueLog,
      },
    });
    return { app: started, pid: workerdPids().find((p) => !before.has(p)) };
  };
  // A fresh instance: the isolate answers once, and SQLite reads the tables the build reads (its
  // page cache is in the same process), so that neither lands in the build's time or memory.
  const warm = async (instance) => {
    const answered = await probe(instance.app.url, { method: "GET", path: "/v1/units", headers: EDGE_HEADERS });
    if (answered.status !== 200) throw new Error(`${instance.app.name}: warm-up answered ${answered.status}`);
    const db = await instance.app.mf.getD1Database("DB");
    await db
      .prepare(
        "SELECT (SELECT sum(length(name) + coalesce(weight_g, 0)) FROM products) AS p, (SELECT sum(quantity) FROM bill_of_materials) AS b",
      )
      .first();
    return instance;
  };
  let app;
  try {
    let pid;
    ({ app, pid } = await start("app-release", {}));
    const db = await app.mf.getD1Database("DB");
    await applyMigrations(db, path.join(ROOT, "migrations"));
    const first = await probe(app.url, { method: "GET", path: "/v1/units", headers: EDGE_HEADERS });
    if (first.status !== 200) throw new Error(`app-release: warm-up answered ${first.status}`);
    const seedStarted = performance.now();
    await db.batch(demoStatements({ products: RELEASE_PRODUCTS, seed: 1 }).map((statement) => db.prepare(statement)));
    const counts = await db
      .prepare("SELECT (SELECT count(*) FROM products) AS records, (SELECT count(*) FROM bill_of_materials) AS bom")
      .first();
    log(
      `app-release: loaded ${RELEASE_PRODUCTS} demo products, ${counts.records} records, ${counts.bom} bill-of-materials rows, in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
    const token = await adminToken(app.url);

    const describeRun = (label, run) =>
      `${label}: ${(run.ms / 1000).toFixed(2)} s (consumer ${(run.consumerMs / 1000).toFixed(2)} s in ${run.slices} slice(s)), ` +
      `workerd RSS ${run.rssBeforeKiB} -> ${run.rssPeakKiB} KiB, progress seen ${run.progressSeen}x; steps ${JSON.stringify(run.stepMs)}`;
    // Each build on an instance of its own (the same files): Miniflare's queue broker, sharing the
    // one workerd process with a build's minutes of D1 and R2 work and the polls, was seen to stop
    // delivering after two long builds in a row.
    // After each timed build (its instance stopped, so SQLite folded its log into the file), the
    // raw reads of the same rows: each round's ratio is taken under the same load, and the
    // section reports their median (this machine's load moves both by tens of percent).
    const runs = [];
    let check = null;
    let raw = null;
    for (let r = 0; r <= rounds; r++) {
      if (r > 0) ({ app, pid } = await warm(await start(`app-release-${r}`, {})));
      const run = await buildOnce(app, pid, queueLog, token, `${r}.0`);
      if (run.release.counts.records !== counts.records)
        throw new Error(`release: ${run.version} holds ${run.release.counts.records} records, the database ${counts.records}`);
      // The first build is unrecorded (the isolate's first queue invocation, statement compiles); it is the one checked.
      if (r === 0) check = await checkRelease(app, run.release);
      await app.mf.dispose();
      app.removeStorage?.();
      app = null;
      if (r === 0) {
        log(describeRun(`release ${r}/${rounds} (unrecorded)`, run));
        continue;
      }
      raw = await rawReads(findSqlite(path.join(persist, "d1")), 1);
      if (raw.records.rows !== counts.records)
        throw new Error(`release: raw read ${raw.records.rows} records, the database holds ${counts.records}`);
      run.rawMs = Object.values(raw).reduce((sum, q) => sum + q.ms, 0);
      run.rawRecordsMs = raw.records.ms;
      run.ofRaw = run.rawMs / run.ms;
      run.ofRawRecordsOnly = run.rawRecordsMs / run.ms;
      log(`${describeRun(`release ${r}/${rounds}`, run)}; raw reads ${Math.round(run.rawMs)} ms: of raw ${run.ofRaw.toFixed(2)}`);
      runs.push(run);
    }

    // Local workerd answers no request of an isolate while a queue invocation of it runs, so polls
    // see progress only between slices: this build is cut into slices of SLICED_MS.
    ({ app, pid } = await warm(await start("app-release-sliced", { RELEASE_BUILD_SLICE_MS: String(SLICED_MS) })));
    const sliced = await buildOnce(app, pid, queueLog, token, "9.0");
    log(describeRun("release in slices", sliced));
    await app.mf.dispose();
    app.removeStorage?.();
    app = null;

    const file = findSqlite(path.join(persist, "d1"));
    const ms = median(runs.map((run) => run.ms));
    const rawMs = median(runs.map((run) => run.rawMs));

    writeFileSync(path.join(dir, "probe.mjs"), PROBE);
    writeFileSync(path.join(dir, "child.mjs"), CHILD);
    const node = [];
    for (const products of MEMORY_PRODUCTS) {
      const measured = await measureInNode(dir, products, config.compatibility_date);
      log(
        `release in Node, ${products} products: ${measured.records} records in ${(measured.ms / 1000).toFixed(2)} s; heap+external above the start: ` +
          `peak ${measured.uncapped.peakAboveStartMiB} MiB, with the old space capped at ${NODE_HEAP_CAP_MIB} MiB ${measured.capped.peakAboveStartMiB} MiB, retained ${measured.retained.aboveStartMiB} MiB`,
      );
      node.push(measured);
    }

    const recordsPerSecond = Math.round(counts.records / (ms / 1000));
    const rawRecordsPerSecond = Math.round(counts.records / (rawMs / 1000));
    const rawRecordsOnly = Math.round(counts.records / (median(runs.map((run) => run.rawRecordsMs)) / 1000));
    const ofRaw = median(runs.map((run) => run.ofRaw));
    const strip = ({ release: _release, ...run }) => ({
      ...run,
      ms: Math.round(run.ms),
      ...(run.rawMs === undefined
        ? {}
        : {
            rawMs: Math.round(run.rawMs),
            rawRecordsMs: Math.round(run.rawRecordsMs),
            ofRaw: +run.ofRaw.toFixed(3),
            ofRawRecordsOnly: +run.ofRawRecordsOnly.toFixed(3),
          }),
    });
    return {
      products: RELEASE_PRODUCTS,
      records: counts.records,
      recordMaterials: raw.record_materials.rows,
      rounds,
      files: check,
      build: {
        ms: Math.round(ms),
        consumerMs: Math.round(median(runs.map((run) => run.consumerMs))),
        recordsPerSecond,
        rssGrowthKiB: pid ? Math.max(...runs.map((run) => run.rssGrowthKiB)) : null,
        rssPeakKiB: pid ? Math.max(...runs.map((run) => run.rssPeakKiB)) : null,
        runs: runs.map(strip),
      },
      sliced: { sliceMs: SLICED_MS, ...strip(sliced) },
      raw: {
        ms: Math.round(rawMs),
        recordsPerSecond: rawRecordsPerSecond,
        recordsOnlyRecordsPerSecond: rawRecordsOnly,
        // The last round's queries.
        queries: Object.fromEntries(Object.entries(raw).map(([name, q]) => [name, { rows: q.rows, ms: Math.round(q.ms) }])),
      },
      // Medians of the rounds' ratios (each round's build against the raw reads right after it).
      ofRaw: +ofRaw.toFixed(3),
      ofRawRecordsOnly: +median(runs.map((run) => run.ofRawRecordsOnly)).toFixed(3),
      sqliteFile: { bytes: statSync(file).size, where: base === "/dev/shm" ? "tmpfs" : "disk" },
      node,
      aim: "a release builds at least 0.3 of the raw read speed of the same rows",
      aimMet: ofRaw >= 0.3,
    };
  } catch (error) {
    if (app?.logTail.length) log(`last ${app.name} worker output:\n${app.logTail.join("\n")}`);
    if (queueLog.lines.length) log(`last Miniflare log lines:\n${queueLog.lines.join("\n")}`);
    throw error;
  } finally {
    if (app) {
      await app.mf.dispose().catch(() => {});
      app.removeStorage?.();
    }
    rmSync(persist, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The section's lines for the console. */
export function formatRelease(result) {
  const b = result.build;
  const steps = b.runs[0]?.stepMs ?? {};
  const stepLine = Object.entries(steps)
    .filter(([, ms]) => ms >= 20)
    .map(([name, ms]) => `${name} ${ms}`)
    .join(", ");
  const lines = [
    `releases: ${result.products.toLocaleString("en")} demo base products, ${result.records.toLocaleString("en")} records, ` +
      `${result.recordMaterials.toLocaleString("en")} bill-of-materials rows; medians over ${result.rounds} builds`,
    `build (POST to published): ${(b.ms / 1000).toFixed(2)} s (queue consumer ${(b.consumerMs / 1000).toFixed(2)} s), ${b.recordsPerSecond.toLocaleString("en")} records/s`,
    `  steps of the first timed build (ms): ${stepLine}; then the staging clean-up (its own message, not timed) ${b.runs[0]?.cleanupMs ?? "n/a"}`,
    `raw reads of the same rows (sql.js, after each build): ${(result.raw.ms / 1000).toFixed(2)} s, ${result.raw.recordsPerSecond.toLocaleString("en")} records/s ` +
      `(the records alone: ${result.raw.recordsOnlyRecordsPerSecond.toLocaleString("en")}/s); of raw: ${result.ofRaw.toFixed(2)} (of the records alone: ` +
      `${result.ofRawRecordsOnly.toFixed(2)}); per round ${result.build.runs.map((run) => run.ofRaw.toFixed(2)).join(", ")}`,
    `in ${result.sliced.sliceMs / 1000} s slices: ${(result.sliced.ms / 1000).toFixed(2)} s in ${result.sliced.slices} slices; progress (records_written) seen by ${result.sliced.progressSeen} polls`,
    `files: records.csv ${result.files.csvMiB} MiB, records.parquet ${result.files.parquetMiB} MiB in ${result.files.rowGroups} row groups`,
    `workerd RSS growth during a build: ${b.rssGrowthKiB === null ? "n/a" : `${(b.rssGrowthKiB / 1024).toFixed(1)} MiB (peak ${(b.rssPeakKiB / 1024).toFixed(0)} MiB)`}`,
    ...result.node.map(
      (n) =>
        `in Node, ${n.products.toLocaleString("en")} products (${n.records.toLocaleString("en")} records), ${(n.ms / 1000).toFixed(2)} s; heap+external above the start: ` +
        `peak ${n.uncapped.peakAboveStartMiB} MiB uncapped, ${n.capped.peakAboveStartMiB} MiB with the old space capped at ${n.capped.heapCapMiB} MiB, retained ${n.retained.aboveStartMiB} MiB`,
    ),
    `aim (${result.aim}): ${result.aimMet ? "met" : "NOT met"}`,
  ];
  return lines.join("\n");
}
