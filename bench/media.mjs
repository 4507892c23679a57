// The media section of `npm run bench` (bench/README.md, Media): the upload of a 10-megapixel JPEG
// (validate, sanitise, quarantine) through HTTP, with an EXIF orientation that needs the lossless
// re-orientation and without, and the queue's media job that follows (scan, re-orientation,
// thumbnails, publication); then the same work in Node, bundled from src/, for its time and peak
// memory without workerd around it.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { build } from "esbuild";
import { Log, LogLevel } from "miniflare";
import { synthBaseline, synthFrame } from "./jpeg-synth.mjs";
import { rssKiB, sampleMemory, workerdPids } from "./memory.mjs";
import { applyMigrations, probe, startApp } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const IMAGES = path.join(ROOT, "src/lib/images");

/** 10.04 megapixels, 3:2, a multiple of the 16-pixel MCU both ways (so a rotation trims nothing). */
export const MEDIA_IMAGE = { width: 3872, height: 2592, sampling: "444" };
/** Timed uploads per orientation (after one unrecorded each); medians are over them. */
const UPLOADS = 5;
/** The queue consumer's max_batch_timeout here: every message waits this long before its batch runs. */
const BATCH_TIMEOUT_S = 1;
/** Queue jobs between the upload's 201 and its thumbnails: the scan job, which also turns the image upright and makes them. */
const QUEUE_HOPS = 1;
const POLL_MS = 50;
const READY_TIMEOUT_MS = 120_000;
/** No single request may take longer (a poll waits while the isolate runs a queue job). */
const REQUEST_TIMEOUT_MS = 60_000;
/**
 * Node-side calls per measured operation, each kind in its own process: NODE_RUNS timed calls in one
 * (the first included: no warm-up, as in a fresh isolate), and NODE_RUNS processes of one probed
 * call each (the peak moves by a few MiB with the garbage not yet collected).
 */
const NODE_RUNS = 3;
const THUMBNAIL_WIDTHS = [200, 800, 1600];
const EDGE_HEADERS = { "cf-connecting-ip": "10.9.0.2" };
const ACCOUNT = { email: "bench.media@example.org", username: "bench_media", password: "copper-meadow-71-violet-harbour" };
const MiB = 2 ** 20;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (msg) => process.stderr.write(`${msg}\n`);

// ---------------------------------------------------------------------------------------------
// The library, bundled from src/ for Node (photon's `node` export, its Wasm inlined): the
// synthesiser's encoder, `prepareImage` (the upload route's checks and sanitiser, without storage),
// and `uprightBytes` + `makeThumbnails` (the media job's pixel work, without the scan and storage).

/**
 * Every typed-array constructor wrapped so that each allocation samples `process.memoryUsage()`:
 * heapUsed + external. `external` already holds the ArrayBuffers (`arrayBuffers` is a part of it)
 * and photon's Wasm memory, so nothing is counted twice. Live memory peaks right after an
 * allocation, and photon's glue makes a new view of its memory each time that memory grows.
 */
const PROBE = `
const state = { peak: 0, at: null, samples: 0 };
globalThis.__mediaMemory = state;
const sample = () => {
  const m = process.memoryUsage();
  const v = m.heapUsed + m.external;
  state.samples++;
  if (v > state.peak) {
    state.peak = v;
    state.at = m;
  }
};
globalThis.__mediaSample = sample;
const wrap = (Base) => class extends Base { constructor(...args) { super(...args); sample(); } };
export const Uint8Array = wrap(globalThis.Uint8Array);
export const Uint8ClampedArray = wrap(globalThis.Uint8ClampedArray);
export const Int8Array = wrap(globalThis.Int8Array);
export const Uint16Array = wrap(globalThis.Uint16Array);
export const Int16Array = wrap(globalThis.Int16Array);
export const Uint32Array = wrap(globalThis.Uint32Array);
export const Int32Array = wrap(globalThis.Int32Array);
export const Float32Array = wrap(globalThis.Float32Array);
export const Float64Array = wrap(globalThis.Float64Array);
`;

async function bundleLibrary(dir) {
  const entry = [
    `export { encodeBaselineJpeg, buildHuffmanCode, IDENTITY_ORDER, IDENTITY_SIGN } from ${JSON.stringify(path.join(IMAGES, "jpeg-encode.ts"))};`,
    `export { ZIGZAG } from ${JSON.stringify(path.join(IMAGES, "jpeg-parse.ts"))};`,
    `export { makeThumbnails } from ${JSON.stringify(path.join(IMAGES, "thumbnails.ts"))};`,
    `export { uprightBytes } from ${JSON.stringify(path.join(ROOT, "src/services/media/orient.ts"))};`,
    `export { prepareImage } from ${JSON.stringify(path.join(ROOT, "src/services/media/upload.ts"))};`,
  ].join("\n");
  const probe = path.join(dir, "probe.mjs");
  writeFileSync(probe, PROBE);
  const common = {
    stdin: { contents: entry, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "error",
  };
  await build({ ...common, outfile: path.join(dir, "plain.mjs") });
  await build({ ...common, outfile: path.join(dir, "probed.mjs"), inject: [probe] });
  writeFileSync(path.join(dir, "child.mjs"), CHILD);
}

/**
 * One measured call in a fresh `node --expose-gc` process, the input already loaded: either
 * NODE_RUNS timed calls (plain bundle), or one call with the probed bundle after a GC, reporting
 * the peak of heapUsed + external above that baseline (i.e. above the input) and the peak RSS above
 * the start (VmHWM, reset through /proc/self/clear_refs), with glibc told to give large blocks back.
 */
const CHILD = `
import { readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
const spec = JSON.parse(process.argv[2]);
const lib = await import(pathToFileURL(spec.lib).href);
const input = new Uint8Array(readFileSync(spec.input));
const status = (field) => Number(new RegExp(field + ":\\\\s+(\\\\d+) kB").exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
const file = new File([input], "bench.jpg", { type: "image/jpeg" });
const hex = (bytes) => createHash("sha256").update(bytes).digest("hex");
// "job": the media job's pixel work on the quarantined bytes: the turn, then the thumbnails of the result.
const run = spec.op === "job"
  ? async () => {
      const upright = lib.uprightBytes(input, "jpeg", spec.orientation);
      return { upright, thumbnails: await lib.makeThumbnails(upright, "jpeg", spec.widths) };
    }
  : () => lib.prepareImage({ file, filename: "bench.jpg", description: null, metadata: null }, "contributor");
const describe = (out) => spec.op === "job"
  ? { bytes: out.upright.length, sha256: hex(out.upright), thumbnails: out.thumbnails.map((t) => ({ width: t.width, bytes: t.bytes.length })) }
  : { width: out.image.width, height: out.image.height, bytes: out.bytes.length, sha256: hex(out.bytes), storageKey: out.storageKey };
let result;
if (spec.probe) {
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m0 = process.memoryUsage();
  const base = m0.heapUsed + m0.external;
  let hwm = true;
  try { writeFileSync("/proc/self/clear_refs", "5"); } catch { hwm = false; }
  const rss0 = status("VmRSS");
  const state = globalThis.__mediaMemory;
  state.peak = 0;
  state.at = null;
  const out = await run();
  globalThis.__mediaSample();
  const at = state.at;
  result = {
    peakAboveInputBytes: state.peak - base,
    atPeak: { heapUsed: at.heapUsed - m0.heapUsed, external: at.external - m0.external, arrayBuffers: at.arrayBuffers - m0.arrayBuffers },
    samples: state.samples,
    rssPeakAboveStartKiB: hwm ? status("VmHWM") - rss0 : null,
    ...describe(out),
  };
} else {
  const ms = [];
  let out;
  for (let i = 0; i < spec.runs; i++) {
    const t0 = performance.now();
    out = await run();
    ms.push(performance.now() - t0);
  }
  result = { ms, ...describe(out) };
}
process.stdout.write(JSON.stringify(result) + "\\n");
`;

function runChild(dir, spec) {
  const res = spawnSync(process.execPath, ["--expose-gc", path.join(dir, "child.mjs"), JSON.stringify(spec)], {
    encoding: "utf8",
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: "65536", MALLOC_TRIM_THRESHOLD_: "65536" },
    maxBuffer: 1 << 20,
  });
  if (res.status !== 0)
    throw new Error(`media: Node ${spec.op} child failed: ${(res.stderr || res.stdout).trim().split("\n").slice(-5).join("\n")}`);
  return JSON.parse(res.stdout.trim().split("\n").pop());
}

/** Time (NODE_RUNS calls, median) and peak memory (NODE_RUNS processes, median) of `op` on `bytes`. */
function measureInNode(dir, op, bytes, name, extra = {}) {
  const input = path.join(dir, `${name}.jpg`);
  writeFileSync(input, bytes);
  const spec = { op, input, widths: THUMBNAIL_WIDTHS, ...extra };
  const time = runChild(dir, { ...spec, lib: path.join(dir, "plain.mjs"), runs: NODE_RUNS });
  const memory = Array.from({ length: NODE_RUNS }, () => runChild(dir, { ...spec, lib: path.join(dir, "probed.mjs"), probe: true }));
  const { ms, ...output } = time;
  const toMiB = (bytes) => +(bytes / MiB).toFixed(1);
  const peaks = memory.map((m) => m.peakAboveInputBytes);
  const mid = memory.find((m) => m.peakAboveInputBytes === median(peaks)) ?? memory[0];
  const rss = memory.every((m) => m.rssPeakAboveStartKiB !== null) ? memory.map((m) => m.rssPeakAboveStartKiB) : null;
  return {
    ms: Math.round(median(ms)),
    runsMs: ms.map((v) => Math.round(v)),
    peakAboveInputMiB: toMiB(median(peaks)),
    peaksAboveInputMiB: peaks.map(toMiB),
    // heapUsed, external and arrayBuffers (a part of external) above the baseline at the median run's peak.
    atPeakMiB: Object.fromEntries(Object.entries(mid.atPeak).map(([k, v]) => [k, toMiB(v)])),
    rssPeakAboveStartMiB: rss ? +(median(rss) / 1024).toFixed(1) : null,
    rssPeaksAboveStartMiB: rss ? rss.map((k) => +(k / 1024).toFixed(1)) : null,
    samples: mid.samples,
    output,
  };
}

// ---------------------------------------------------------------------------------------------
// The images: one synthetic baseline JPEG (bench/jpeg-synth.mjs), and per upload a copy with an
// Exif APP1 after SOI: a big-endian TIFF whose IFD0 holds Make (kept by the sanitiser, so each
// upload's stored bytes, hence its content address, differ) and Orientation.

function exifSegment(orientation, make) {
  if (make.length !== 3) throw new Error("make must be 3 ASCII characters (4 bytes with its NUL: stored in the entry)");
  const tiff = [
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0x00,
    0x00,
    0x00,
    0x08, // "MM", 42, IFD0 at 8
    0x00,
    0x02, // two entries, in tag order
    0x01,
    0x0f,
    0x00,
    0x02,
    0x00,
    0x00,
    0x00,
    0x04,
    ...Buffer.from(make, "latin1"),
    0x00, // Make, ASCII, 4
    0x01,
    0x12,
    0x00,
    0x03,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    orientation,
    0x00,
    0x00, // Orientation, SHORT, 1
    0x00,
    0x00,
    0x00,
    0x00, // no IFD1
  ];
  const payload = [...Buffer.from("Exif\0\0", "latin1"), ...tiff];
  return Uint8Array.from([0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload]);
}

function withExif(jpeg, orientation, make) {
  const app1 = exifSegment(orientation, make);
  const out = new Uint8Array(jpeg.length + app1.length);
  out.set(jpeg.subarray(0, 2));
  out.set(app1, 2);
  out.set(jpeg.subarray(2), 2 + app1.length);
  return out;
}

/** Width and height from the first SOF of a JPEG. */
function jpegSize(b) {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: (b[i + 7] << 8) | b[i + 8], height: (b[i + 5] << 8) | b[i + 6] };
    }
    i += 2 + ((b[i + 2] << 8) | b[i + 3]);
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** Miniflare's own log, kept: the queue broker logs every batch it delivers with its duration. */
export class QueueLog extends Log {
  constructor() {
    super(LogLevel.INFO);
    this.batches = [];
    this.lines = [];
  }
  log(message) {
    const line = stripVTControlCharacters(message);
    const batch = /QUEUE (\S+) (\d+)\/(\d+) \((\d+)ms\)/.exec(line);
    if (batch) this.batches.push({ queue: batch[1], acked: Number(batch[2]), total: Number(batch[3]), ms: Number(batch[4]) });
    this.lines.push(line);
    if (this.lines.length > 40) this.lines.shift();
  }
}

async function call(url, method, p, { token, json, form, body: raw } = {}) {
  const headers = { ...EDGE_HEADERS };
  if (token) headers.authorization = `Bearer ${token}`;
  let body = raw;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(form).toString();
  }
  let response;
  try {
    response = await fetch(url + p, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    // A keep-alive connection workerd closed while idle (during a long queue job) fails the next
    // request sent on it; a read is sent again once, on a new connection.
    if (method !== "GET") throw error;
    log(`media: GET ${p} failed (${error?.cause?.code ?? error?.cause?.message ?? error?.message}); sent again`);
    response = await fetch(url + p, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    bytes,
    text: () => Buffer.from(bytes).toString("utf8"),
    json: () => JSON.parse(Buffer.from(bytes).toString("utf8")),
  };
}

async function expect(promise, what, status) {
  const response = await promise;
  if (response.status !== status)
    throw new Error(`media: ${what} answered ${response.status}, expected ${status}: ${response.text().slice(0, 300)}`);
  return response;
}

/** Registers ACCOUNT, verifies it through the link in the development outbox, logs in; returns the access token. */
async function signUp(url) {
  await expect(call(url, "POST", "/v1/auth/register", { json: ACCOUNT }), "POST /v1/auth/register", 201);
  const outbox = (await expect(call(url, "GET", `/__dev/outbox?to=${encodeURIComponent(ACCOUNT.email)}`), "GET /__dev/outbox", 200)).json();
  const token = outbox.items.map((m) => /\/verify#token=([^\s]+)/.exec(m.text)?.[1]).find(Boolean);
  if (!token) throw new Error(`media: no verification link in the outbox of ${ACCOUNT.email}`);
  await expect(call(url, "POST", "/v1/auth/verify", { json: { token } }), "POST /v1/auth/verify", 200);
  const login = (
    await expect(
      call(url, "POST", "/v1/auth/bearer/login", { form: { username: ACCOUNT.username, password: ACCOUNT.password } }),
      "bearer login",
      200,
    )
  ).json();
  return login.access_token;
}

/**
 * One upload and its queue jobs, timed: the request (with workerd's RSS sampled from sending to the
 * 201's body) and, from the 201, the wait until the list names the image's thumbnail (RSS sampled
 * again), plus the broker's durations of the two batches (scan, thumbnails).
 */
async function uploadOnce(app, pid, queueLog, { token, productId, bytes, name }) {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "image/jpeg" }), name);
  const batchesBefore = queueLog.batches.length;
  const rssBefore = rssKiB(pid);
  // A sampler left running would keep Node alive after a failure: each is stopped in a finally.
  const stopUpload = sampleMemory(pid);
  const started = performance.now();
  let response;
  let text;
  let created;
  let rssPeak;
  try {
    response = await fetch(`${app.url}/v1/products/${productId}/images`, {
      method: "POST",
      headers: { ...EDGE_HEADERS, authorization: `Bearer ${token}` },
      body: form,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    text = await response.text();
    created = performance.now();
  } finally {
    rssPeak = stopUpload();
  }
  if (response.status !== 201) throw new Error(`media: upload of ${name} answered ${response.status}: ${text.slice(0, 300)}`);
  const item = JSON.parse(text);

  const rssAtCreated = rssKiB(pid);
  const stopJobs = sampleMemory(pid);
  let listed = null;
  let polls = 0;
  let ready;
  let jobsPeak;
  try {
    for (;;) {
      const page = await call(app.url, "GET", `/v1/products/${productId}/images?size=100`, { token });
      polls++;
      if (page.status !== 200) throw new Error(`media: GET images answered ${page.status}: ${page.text().slice(0, 300)}`);
      listed = page.json().items.find((i) => i.id === item.id && i.thumbnail_url.includes("/thumbnails/"));
      if (listed) break;
      if (performance.now() - created > READY_TIMEOUT_MS)
        throw new Error(`media: no thumbnail for ${name} ${READY_TIMEOUT_MS / 1000} s after its upload`);
      await sleep(POLL_MS);
    }
    ready = performance.now();
  } finally {
    jobsPeak = stopJobs();
  }
  // The broker logs a batch once its handler has returned, just after the row was marked ready
  // (on a loaded machine, seconds later: up to 10 s is waited for).
  for (let i = 0; queueLog.batches.length < batchesBefore + QUEUE_HOPS && i < 500; i++) await sleep(20);
  const batches = queueLog.batches.slice(batchesBefore);
  if (batches.length !== QUEUE_HOPS || batches.some((b) => b.acked !== b.total)) {
    throw new Error(
      `media: expected ${QUEUE_HOPS} acknowledged batch (the scan job) for ${name}, the broker logged ${JSON.stringify(batches)}`,
    );
  }
  return {
    name,
    id: item.id,
    imageUrl: item.image_url,
    thumbnailUrl: listed.thumbnail_url,
    uploadMs: created - started,
    rssBeforeKiB: rssBefore,
    rssPeakKiB: rssPeak,
    rssGrowthKiB: rssPeak - rssBefore,
    readyMs: ready - created,
    polls,
    jobBatchMs: batches[0].ms,
    jobsRssBeforeKiB: rssAtCreated,
    jobsRssPeakKiB: jobsPeak,
    jobsRssGrowthKiB: jobsPeak - rssAtCreated,
  };
}

function summarizeRuns(runs) {
  const batchWaitMs = QUEUE_HOPS * BATCH_TIMEOUT_S * 1000;
  return {
    upload: {
      ms: Math.round(median(runs.map((r) => r.uploadMs))),
      rssGrowthKiB: Math.max(...runs.map((r) => r.rssGrowthKiB)),
      rssGrowthMedianKiB: median(runs.map((r) => r.rssGrowthKiB)),
      rssPeakKiB: Math.max(...runs.map((r) => r.rssPeakKiB)),
    },
    thumbnails: {
      // From the 201 to the list naming the thumbnail, less the batch wait.
      ms: Math.round(median(runs.map((r) => r.readyMs)) - batchWaitMs),
      readyMs: Math.round(median(runs.map((r) => r.readyMs))),
      jobBatchMs: median(runs.map((r) => r.jobBatchMs)),
      rssGrowthKiB: Math.max(...runs.map((r) => r.jobsRssGrowthKiB)),
      rssPeakKiB: Math.max(...runs.map((r) => r.jobsRssPeakKiB)),
    },
    runs: runs.map((r) => ({
      ...r,
      uploadMs: Math.round(r.uploadMs),
      readyMs: Math.round(r.readyMs),
    })),
  };
}

/**
 * Starts `app-media` (D1 and R2 in files on tmpfs, so stored objects do not sit in workerd's
 * memory; the media queue with a consumer, max_batch_timeout BATCH_TIMEOUT_S), signs up, creates a
 * product, then uploads, one at a time, each waiting for its thumbnails before the next: one
 * unrecorded upload per orientation, then UPLOADS rounds of (orientation 6, orientation 1). Then,
 * the instance stopped, the same calls in Node on the bytes it stored.
 */
export async function runMediaBench({ config, bundle, port, viaEntry, doStorage, log }) {
  const started = performance.now();
  const base = existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const dir = mkdtempSync(path.join(os.tmpdir(), "relab-bench-media-"));
  const persist = mkdtempSync(path.join(base, "relab-bench-media-store-"));
  const before = new Set(workerdPids());
  const queueLog = new QueueLog();
  let app;
  try {
    await bundleLibrary(dir);
    const lib = await import(pathToFileURL(path.join(dir, "plain.mjs")).href);
    const synthStarted = performance.now();
    const jpeg = synthBaseline(lib, synthFrame(lib, MEDIA_IMAGE.width, MEDIA_IMAGE.height, MEDIA_IMAGE.sampling));
    log(
      `media: synthesised a ${MEDIA_IMAGE.width}x${MEDIA_IMAGE.height} ${MEDIA_IMAGE.sampling} baseline JPEG, ${(jpeg.length / MiB).toFixed(2)} MiB, in ${((performance.now() - synthStarted) / 1000).toFixed(1)} s`,
    );

    app = await startApp(config, bundle, port, viaEntry, {
      name: "app-media",
      doStorage,
      miniflare: {
        d1Persist: path.join(persist, "d1"),
        r2Persist: path.join(persist, "r2"),
        queueConsumers: { "relab-media": { maxBatchSize: 10, maxBatchTimeout: BATCH_TIMEOUT_S, maxRetries: 0 } },
        log: queueLog,
      },
    });
    const pid = workerdPids().find((p) => !before.has(p));
    if (!pid) throw new Error("media: cannot find app-media's workerd process");
    const db = await app.mf.getD1Database("DB");
    await applyMigrations(db, path.join(ROOT, "migrations"));
    const warm = await probe(app.url, { method: "GET", path: "/v1/units", headers: EDGE_HEADERS });
    if (warm.status !== 200) throw new Error(`app-media: warm-up answered ${warm.status}`);
    const token = await signUp(app.url);
    const product = (
      await expect(call(app.url, "POST", "/v1/products", { token, json: { name: "Bench media" } }), "POST /v1/products", 201)
    ).json();

    const plan = [];
    // Make: orientation digit, round (w for warm-up), "m": unique per upload.
    for (const o of [6, 1]) plan.push({ orientation: o, warmUp: true, make: `${o}wm` });
    for (let r = 1; r <= UPLOADS; r++) for (const o of [6, 1]) plan.push({ orientation: o, warmUp: false, make: `${o}${r}m` });
    const runs = { 6: [], 1: [] };
    const warmUps = {};
    const inputs = {};
    for (const step of plan) {
      const bytes = withExif(jpeg, step.orientation, step.make);
      const run = await uploadOnce(app, pid, queueLog, { token, productId: product.id, bytes, name: `bench-${step.make}.jpg` });
      log(
        `media upload o${step.orientation}${step.warmUp ? " (warm-up)" : ""}: ${Math.round(run.uploadMs)} ms, workerd RSS ${run.rssBeforeKiB} -> ${run.rssPeakKiB} KiB; ` +
          `thumbnails after ${Math.round(run.readyMs)} ms (job batch ${run.jobBatchMs} ms), RSS ${run.jobsRssBeforeKiB} -> ${run.jobsRssPeakKiB} KiB`,
      );
      if (step.warmUp) warmUps[step.orientation] = run;
      else runs[step.orientation].push(run);
      inputs[step.orientation] = { bytes, run };
    }

    // The bytes as stored (the last upload of each orientation), and one thumbnail of each served.
    const stored = {};
    for (const o of [6, 1]) {
      const { run } = inputs[o];
      const image = await expect(call(app.url, "GET", new URL(run.imageUrl).pathname), `GET ${run.imageUrl}`, 200);
      const thumb = await expect(call(app.url, "GET", new URL(run.thumbnailUrl).pathname), `GET ${run.thumbnailUrl}`, 200);
      const size = jpegSize(image.bytes);
      const expected =
        o === 6 ? { width: MEDIA_IMAGE.height, height: MEDIA_IMAGE.width } : { width: MEDIA_IMAGE.width, height: MEDIA_IMAGE.height };
      if (size?.width !== expected.width || size?.height !== expected.height)
        throw new Error(`media: the stored o${o} image is ${JSON.stringify(size)}, expected ${JSON.stringify(expected)}`);
      stored[o] = {
        bytes: image.bytes,
        size,
        sha256: sha256(image.bytes),
        thumbnail200: { ...jpegSize(thumb.bytes), bytes: thumb.bytes.length },
      };
    }
    await app.mf.dispose();
    app.removeStorage?.();
    app = null;
    const httpSeconds = (performance.now() - started) / 1000;

    // Node: the same calls, each in fresh processes, with workerd stopped.
    const node = { thumbnails: {}, prepare: {} };
    for (const o of [6, 1]) {
      node.prepare[o] = measureInNode(dir, "prepare", inputs[o].bytes, `upload-o${o}`);
      log(
        `media in Node: prepareImage of the o${o} upload ${node.prepare[o].ms} ms, peak ${node.prepare[o].peakAboveInputMiB} MiB above the input`,
      );
      // The request in Node names the storage key app-media gave the upload (its image_url).
      if (node.prepare[o].output.storageKey !== new URL(inputs[o].run.imageUrl).pathname.split("/").pop()) {
        throw new Error(`media: prepareImage in Node gave another storage key than app-media for o${o}`);
      }
      // The job's pixel work on the quarantined bytes (prepareImage's output, recomputed here).
      const quarantined = (
        await lib.prepareImage(
          {
            file: new File([inputs[o].bytes], "bench.jpg", { type: "image/jpeg" }),
            filename: "bench.jpg",
            description: null,
            metadata: null,
          },
          "contributor",
        )
      ).bytes;
      node.thumbnails[o] = measureInNode(dir, "job", quarantined, `quarantined-o${o}`, { orientation: o });
      log(
        `media in Node: uprightBytes + makeThumbnails of the quarantined o${o} image ${node.thumbnails[o].ms} ms, peak ${node.thumbnails[o].peakAboveInputMiB} MiB above the input`,
      );
      // The service in Node and in workerd must have served the same bytes.
      if (node.thumbnails[o].output.sha256 !== stored[o].sha256)
        throw new Error(`media: the job's work in Node gave other bytes than app-media served for o${o}`);
    }

    const byOrientation = (o) => {
      const s = summarizeRuns(runs[o]);
      return {
        orientation: o,
        upload: { ...s.upload, bytes: inputs[o].bytes.length },
        stored: { ...stored[o].size, bytes: stored[o].bytes.length, thumbnail200: stored[o].thumbnail200 },
        thumbnails: s.thumbnails,
        warmUp: {
          uploadMs: Math.round(warmUps[o].uploadMs),
          rssBeforeKiB: warmUps[o].rssBeforeKiB,
          rssGrowthKiB: warmUps[o].rssGrowthKiB,
          readyMs: Math.round(warmUps[o].readyMs),
          jobsRssGrowthKiB: warmUps[o].jobsRssGrowthKiB,
        },
        node: { thumbnails: node.thumbnails[o], prepare: node.prepare[o] },
        runs: s.runs,
      };
    };
    return {
      image: {
        ...MEDIA_IMAGE,
        megapixels: +((MEDIA_IMAGE.width * MEDIA_IMAGE.height) / 1e6).toFixed(2),
        jpegBytes: jpeg.length,
        thumbnailWidths: THUMBNAIL_WIDTHS,
      },
      uploads: UPLOADS,
      batchTimeoutS: BATCH_TIMEOUT_S,
      batchWaitMs: QUEUE_HOPS * BATCH_TIMEOUT_S * 1000,
      nodeRuns: NODE_RUNS,
      storage: base === "/dev/shm" ? "tmpfs" : "disk",
      seconds: { http: +httpSeconds.toFixed(1), total: +((performance.now() - started) / 1000).toFixed(1) },
      orientations: [byOrientation(6), byOrientation(1)],
    };
  } catch (error) {
    if (app?.logTail.length) log(`last app-media worker output:\n${app.logTail.join("\n")}`);
    if (queueLog.lines.length) log(`last Miniflare log lines:\n${queueLog.lines.join("\n")}`);
    throw error;
  } finally {
    if (app) {
      await app.mf.dispose().catch(() => {});
      app.removeStorage?.();
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(persist, { recursive: true, force: true });
  }
}

const mib = (kib) => (kib / 1024).toFixed(1);

/** The section's lines for the console. */
export function formatMedia(result) {
  const { image } = result;
  const lines = [
    `media: ${image.width}x${image.height} (${image.megapixels} MP) ${image.sampling} baseline JPEG, ${(image.jpegBytes / MiB).toFixed(2)} MiB, with an Exif Orientation; ` +
      `medians of ${result.uploads} uploads per orientation (after one unrecorded), each waiting for its thumbnails; Node: medians of ${result.nodeRuns} calls (time) and of ${result.nodeRuns} processes (peak)`,
    "",
    "upload (POST /v1/products/{id}/images, validate + sanitise + quarantine, 201; no pixel work)",
    "orientation  stored       request    workerd RSS growth (peak)   Node prepareImage: time  peak heap+external (RSS)",
  ];
  for (const o of result.orientations) {
    lines.push(
      `${String(o.orientation).padEnd(11)}  ${`${o.stored.width}x${o.stored.height}`.padEnd(11)}  ${String(o.upload.ms).padStart(6)} ms  ` +
        `${`${mib(o.upload.rssGrowthKiB)} MiB (${mib(o.upload.rssPeakKiB)} MiB)`.padStart(24)}    ${String(o.node.prepare.ms).padStart(17)} ms  ` +
        `${o.node.prepare.peakAboveInputMiB} MiB (${o.node.prepare.rssPeakAboveStartMiB ?? "n/a"} MiB)`,
    );
  }
  lines.push(
    "",
    `media job (scan, re-orientation, thumbnails ${image.thumbnailWidths.join("/")}, publication; from the 201 to the list naming the thumbnail, less ${result.batchWaitMs} ms of batch wait)`,
    "orientation  job      job batch  workerd RSS growth (peak)   Node uprightBytes + makeThumbnails: time  peak heap+external (RSS)",
  );
  for (const o of result.orientations) {
    const t = o.thumbnails;
    lines.push(
      `${String(o.orientation).padEnd(11)}  ${String(t.ms).padStart(5)} ms  ${String(t.jobBatchMs).padStart(7)} ms  ` +
        `${`${mib(t.rssGrowthKiB)} MiB (${mib(t.rssPeakKiB)} MiB)`.padStart(24)}    ${String(o.node.thumbnails.ms).padStart(33)} ms  ` +
        `${o.node.thumbnails.peakAboveInputMiB} MiB (${o.node.thumbnails.rssPeakAboveStartMiB ?? "n/a"} MiB)`,
    );
  }
  lines.push(
    `first upload of the instance (unrecorded), per orientation: ${result.orientations
      .map(
        (o) =>
          `o${o.orientation} ${o.warmUp.uploadMs} ms, workerd RSS +${mib(o.warmUp.rssGrowthKiB)} MiB, ` +
          `its jobs +${mib(o.warmUp.jobsRssGrowthKiB)} MiB`,
      )
      .join("; ")} (o6 ran first)`,
  );
  lines.push(
    `(workerd RSS is the whole process: isolate, D1, R2, the queue broker; Node peaks are above the loaded input. Section took ${result.seconds.total} s.)`,
  );
  return lines.join("\n");
}
