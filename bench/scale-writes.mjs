// The writes section of the scale bench (issue 30, "Writes that stay bounded"; bench/README.md,
// "Scale (issue 30)"): at each dataset size, the writes that grow with the data, each through the API
// of the bundled worker with the release and deletion queues' consumers attached, on a copy of a
// seeded demo database. Per write: wall time (request to the end of the queue work it started),
// D1 round trips, statements, rows read and written, D1 time, the longest single statement's D1
// time, and the queue slices it took, summed over the request (its Server-Timing and access log
// line) and the queue invocations (their log lines).
//
//   node bench/scale-writes.mjs [--sizes 2000,30000] [--300k] [--data-dir <dir>] [--only <write>] [--out <file>]
//
// `npm run bench:scale` (bench/scale.mjs) runs the same function after its read routes, on its own
// working copy of each size, when this file is there.
import { randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Log, LogLevel } from "miniflare";
import { adminSession } from "./release.mjs";
import { applyPendingMigrations, datasetD1Id, ensureSeeded, localD1Id, workingCopy } from "./scale-data.mjs";
import { BOOTSTRAP, buildWorker, disposeAll, readWranglerConfig, startApp } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const HEADERS = { "cf-connecting-ip": "10.9.0.7" };
// Miniflare's queue broker posts a log line to Node's loopback server after every delivery, on a
// kept-alive connection; Node closes connections idle for 5 s (`keepAliveTimeout`), so after a
// queue invocation longer than that (a release slice: 25-35 s at 300,000 products) the post could
// meet a reset connection ("Connection reset by peer", seen with `verbose`), the broker's delivery
// loop then threw before clearing its pending flush, and no message of that queue was delivered
// again: the release stopped after its second slice, every time. A local artefact (Cloudflare's
// queues have no such loop), so the bench keeps Node's servers' idle connections for 10 minutes.
const createServer = http.createServer;
http.createServer = (...args) => {
  const server = createServer(...args);
  server.keepAliveTimeout = 600_000;
  return server;
};

/** The account deletions' size: 5,000 base products each (fewer where the dataset is smaller: at most 40 % of it each). */
const ACCOUNT_PRODUCTS = 5_000;
const JOB_TIMEOUT_MS = 1_800_000;

export const WRITES = [
  "create 1,000 components",
  "update one",
  "delete 1,000 components",
  "rename a material",
  "delete account (anonymize)",
  "delete account (delete)",
  "publish a release",
  "release staging clean-up",
];

// ---------------------------------------------------------------------------------------------
// What the worker says: every JSON line it prints, kept with the time it arrived.

function workerOutput() {
  // SCALE_WRITES_ECHO=<file>: every line the worker prints also goes there, as it comes (to watch a long build).
  const echo = process.env.SCALE_WRITES_ECHO ? createWriteStream(process.env.SCALE_WRITES_ECHO, { flags: "a" }) : null;
  const entries = [];
  let crashed = null;
  // With the echo, Miniflare's own log too (queue deliveries, retries, dropped messages).
  const log = echo
    ? new (class extends Log {
        log(message) {
          echo.write(`${new Date().toISOString()} [miniflare] ${message}\n`);
        }
      })(LogLevel.DEBUG)
    : undefined;
  /** The last lines that were no log line of the app (workerd's own), for an error message. */
  const other = [];
  const keep = (stream) => {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        echo?.write(`${new Date().toISOString()} ${line}\n`);
        try {
          if (line.startsWith("{")) {
            entries.push({ at: performance.now(), ...JSON.parse(line) });
            continue;
          }
        } catch {
          // not a log line of the app
        }
        other.push(line);
        if (other.length > 40) other.shift();
        // workerd itself died (it segfaulted once at 300,000, after a release slice): waiting on is useless.
        if (/\*\*\* Received signal #\d+/.test(line)) crashed = line;
      }
    });
  };
  return {
    entries,
    other,
    log,
    /** Throws when workerd reported a fatal signal. */
    assertAlive: () => {
      if (crashed) throw new Error(`scale-writes: workerd crashed (${crashed}); its last lines:\n${other.join("\n")}`);
    },
    handleRuntimeStdio: (stdout, stderr) => (keep(stdout), keep(stderr)),
  };
}

/** Waits until `find` returns an entry (polling the captured lines every 50 ms). */
async function waitFor(output, find, what, timeoutMs = JOB_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find(output.entries);
    if (found) return found;
    output.assertAlive();
    if (Date.now() > deadline)
      throw new Error(`scale-writes: no ${what} within ${timeoutMs / 1000} s; workerd said:\n${output.other.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ---------------------------------------------------------------------------------------------
// Costs: a request's, from its Server-Timing and access log line; a queue invocation's, from its line.

const zero = () => ({ roundTrips: 0, statements: 0, rowsRead: 0, rowsWritten: 0, d1Ms: 0, longestMs: 0, slices: 0 });

function addLine(cost, line) {
  cost.roundTrips += line.d1_round_trips ?? 0;
  cost.statements += line.d1_statements ?? 0;
  cost.rowsRead += line.d1_rows_read ?? 0;
  cost.rowsWritten += line.d1_rows_written ?? 0;
  cost.d1Ms += line.d1_duration_ms ?? 0;
  cost.longestMs = Math.max(cost.longestMs, line.d1_longest_ms ?? 0);
  return cost;
}

async function request(app, output, method, p, { token, json, expect } = {}) {
  const id = randomUUID();
  const headers = { ...HEADERS, "x-request-id": id };
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers["content-type"] = "application/json";
  const started = performance.now();
  const response = await fetch(app.url + p, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await response.text();
  const ms = performance.now() - started;
  if (expect !== undefined && response.status !== expect)
    throw new Error(`scale-writes: ${method} ${p} answered ${response.status}, expected ${expect}: ${text.slice(0, 300)}`);
  const line = await waitFor(
    output,
    (entries) => entries.find((e) => e.msg === "request" && e.request_id === id),
    `log line of ${method} ${p}`,
    10_000,
  );
  return { status: response.status, ms, started, requestId: id, body: text ? JSON.parse(text) : null, cost: addLine(zero(), line) };
}

const round = (value) => Math.round(value * 100) / 100;

/** `request`: the request's own cost, when queue work followed it (its longest statement is the one a client waits on). */
function row(write, products, detail, wallMs, cost, request = cost) {
  return {
    write,
    products,
    detail,
    wallMs: Math.round(wallMs),
    roundTrips: cost.roundTrips,
    statements: cost.statements,
    rowsRead: cost.rowsRead,
    rowsWritten: cost.rowsWritten,
    d1Ms: round(cost.d1Ms),
    longestMs: round(cost.longestMs),
    requestLongestMs: round(request.longestMs),
    slices: cost.slices,
  };
}

// ---------------------------------------------------------------------------------------------
// The writes.

/** A body of 1,000 components (10 with 99 each), every one with two bill-of-materials entries. */
function bigBody(materials) {
  const bom = materials.map((material_id, i) => ({ material_id, quantity: i + 1, unit: "g" }));
  return {
    name: "Scale bench server rack",
    brand: "benchbrand",
    components: Array.from({ length: 10 }, (_, i) => ({
      name: `Rack module ${i}`,
      amount_in_parent: 1,
      bill_of_materials: bom,
      components: Array.from({ length: 99 }, (_, j) => ({ name: `Rack part ${i}.${j}`, amount_in_parent: 1, bill_of_materials: bom })),
    })),
  };
}

/** A user row straight into the database, owning the `count` newest demo base products with their trees (set-up, not measured). */
async function accountWith(db, name, count) {
  const user = await db
    .prepare(
      "INSERT INTO users (email, email_canonical, username, hashed_password, is_active, is_verified, profile_visibility) VALUES (?, ?, ?, NULL, 1, 1, 'public') RETURNING id",
    )
    .bind(`${name}@relab.invalid`, `${name}@relab.invalid`, name)
    .first();
  await db
    .prepare(
      `UPDATE products SET owner_id = ? WHERE root_id IN (
        SELECT id FROM products WHERE parent_id IS NULL AND owner_id = (SELECT id FROM users WHERE username = 'demo_contributor') ORDER BY id DESC LIMIT ?)`,
    )
    .bind(user.id, count)
    .run();
  const records = await db.prepare("SELECT count(*) AS n FROM products WHERE owner_id = ?").bind(user.id).first();
  return { id: user.id, products: count, records: records.n };
}

/**
 * A deletion through the API and, when it started one, its job to the end (the request logs
 * "deletion job started"): the request's cost plus every queue invocation's.
 */
async function deletionWithJob(app, output, method, p, options) {
  const from = output.entries.length;
  const answer = await request(app, output, method, p, options);
  const own = { ...answer.cost };
  const cost = answer.cost;
  const started = output.entries.slice(from).find((e) => e.msg === "deletion job started" && e.request_id === answer.requestId);
  const ours = (e) => (e.msg === "deletion job continues" || e.msg === "deletion job finished") && e.job_id === started?.job_id;
  let end = answer.started + answer.ms;
  if (started) {
    // Every message logs its cost when it ends; the last one says the job finished.
    const finished = await waitFor(
      output,
      (entries) => entries.slice(from).find((e) => ours(e) && e.msg === "deletion job finished"),
      `the end of job ${started.job_id}`,
    );
    end = finished.at;
    for (const line of output.entries.slice(from).filter(ours)) {
      addLine(cost, line);
      cost.slices += line.message_slices ?? 0;
    }
  }
  return { wallMs: end - answer.started, cost, request: own, job: Boolean(started) };
}

/**
 * The writes at one dataset size, against the database under `d1Persist` (a working copy: the
 * writes change it). Starts its own worker with the release and deletion queues' consumers.
 */
export async function runScaleWrites({
  config,
  bundle,
  d1Persist,
  d1Id = localD1Id(config),
  products,
  port = 0,
  only = [],
  log = console.log,
}) {
  const output = workerOutput();
  const r2 = mkdtempSync(path.join(os.tmpdir(), "relab-scale-writes-r2-"));
  const targets = [];
  const rows = [];
  // Each write's row is printed as soon as it is measured: a later write that fails loses none.
  const show = (r) =>
    log(
      `  ${r.write.padEnd(28)} ${String(r.wallMs).padStart(8)} ms  trips ${String(r.roundTrips).padStart(5)}  statements ${String(r.statements).padStart(6)}  ` +
        `read ${String(r.rowsRead).padStart(9)}  written ${String(r.rowsWritten).padStart(9)}  d1 ${String(r.d1Ms).padStart(9)} ms  longest ${String(r.longestMs).padStart(8)} ms (request ${r.requestLongestMs} ms)  slices ${r.slices}`,
    );
  const record = (r) => {
    rows.push(r);
    show(r);
  };
  const selected = (name) => only.length === 0 || only.some((text) => name.includes(text));
  try {
    const app = await startApp(config, bundle, port, false, {
      name: `writes-${products}`,
      vars: { RATE_LIMITS_ENABLED: "false" },
      miniflare: {
        d1Databases: { DB: d1Id },
        d1Persist,
        r2Persist: r2,
        queueProducers: {
          MEDIA_QUEUE: "relab-media",
          EVENTS_QUEUE: "relab-events",
          RELEASE_QUEUE: "relab-releases",
          DELETION_QUEUE: "relab-deletions",
        },
        // As wrangler.jsonc: one message a batch.
        queueConsumers: {
          "relab-releases": { maxBatchSize: 1, maxBatchTimeout: 1, maxRetries: 10 },
          "relab-deletions": { maxBatchSize: 1, maxBatchTimeout: 1, maxRetries: 10 },
        },
        handleRuntimeStdio: output.handleRuntimeStdio,
        ...(output.log ? { log: output.log, verbose: true } : {}),
      },
    });
    targets.push(app);
    const db = await app.mf.getD1Database("DB");
    const migrated = await applyPendingMigrations(db);
    if (migrated.length) log(`  writes: applied ${migrated.map((m) => m.name).join(", ")} to the working copy`);
    await request(app, output, "GET", "/v1/units", { expect: 200 });
    const admin = await adminSession(app.url);
    const token = admin.token;
    const stepUp = () => ({ current_password: BOOTSTRAP.password, mfa_code: admin.recoveryCodes.shift() });

    // Set-up, not measured: two materials for the bodies, the most used material, two accounts.
    const materials = (await db.prepare("SELECT id FROM materials ORDER BY id LIMIT 2").all()).results.map((r) => r.id);
    // Only what the selected writes need: at 300,000 the busiest material's count reads 8.5 million
    // bill-of-materials rows and each account's take-over rewrites 75,000 records.
    const busiest = selected("material")
      ? await db
          .prepare(
            "SELECT m.id, m.name, (SELECT count(*) FROM bill_of_materials b WHERE b.material_id = m.id) AS uses FROM materials m ORDER BY uses DESC LIMIT 1",
          )
          .first()
      : null;
    const each = Math.min(ACCOUNT_PRODUCTS, Math.floor(products * 0.4));
    const anonymized = selected("delete account (anonymize)") ? await accountWith(db, `bench_anon_${products}`, each) : null;
    const deleted = selected("delete account (delete)") ? await accountWith(db, `bench_delete_${products}`, each) : null;
    log(`  writes: set up (${new Date().toISOString()})`);
    // One unrecorded round of the product writes: the isolate's first run of their code and statements.
    const warm = await request(app, output, "POST", "/v1/products", { token, json: { name: "Warm-up kettle" }, expect: 201 });
    await request(app, output, "DELETE", `/v1/products/${warm.body.id}`, { token, expect: 204 });

    let big = null;
    if (selected("create") || selected("update") || selected("delete 1,000")) {
      const created = await request(app, output, "POST", "/v1/products", { token, json: bigBody(materials), expect: 201 });
      big = created.body;
      record(
        row("create 1,000 components", products, "1,001 records, 2,000 bill-of-materials entries, one batch", created.ms, created.cost),
      );
      const patched = await patch(app, output, `/v1/products/${big.id}`, token, {
        name: "Scale bench server rack, renamed",
        weight_g: 12_000,
      });
      record(row("update one", products, "PATCH of the base product's name and weight", patched.ms, patched.cost));
      const removed = await deletionWithJob(
        app,
        output,
        "DELETE",
        `/v1/products/${big.id}`,
        { token, expect: 204 },
        (e) => e.record_id === big.id,
      );
      record(
        row(
          "delete 1,000 components",
          products,
          removed.job ? "hidden at once, removed by a deletion job" : "one batch in the request",
          removed.wallMs,
          removed.cost,
          removed.request,
        ),
      );
    }
    if (selected("material")) {
      const renamed = await request(app, output, "PATCH", `/v1/admin/materials/${busiest.id}`, {
        token,
        json: { name: `${busiest.name} (renamed)` },
        expect: 200,
      });
      record(
        row(
          "rename a material",
          products,
          `${busiest.name}: in ${busiest.uses.toLocaleString("en")} bill-of-materials rows`,
          renamed.ms,
          renamed.cost,
        ),
      );
    }
    for (const [content, account] of [
      ["anonymize", anonymized],
      ["delete", deleted],
    ]) {
      const name = `delete account (${content})`;
      if (!selected(name)) continue;
      const done = await deletionWithJob(app, output, "DELETE", `/v1/admin/users/${account.id}?content=${content}`, {
        token,
        json: stepUp(),
        expect: 204,
      });
      record(
        row(
          name,
          products,
          `${account.products.toLocaleString("en")} base products, ${account.records.toLocaleString("en")} records`,
          done.wallMs,
          done.cost,
          done.request,
        ),
      );
    }
    if (selected("release")) {
      const version = `${products}.0`;
      const from = output.entries.length;
      const posted = await request(app, output, "POST", "/v1/admin/releases", {
        token,
        json: { version, title: `Scale bench ${products}` },
        expect: 202,
      });
      // The build's state is polled in the database, not through the API: a build can outlast the
      // admin's 15-minute access token (at 150,000 base products the API then answered 404, the
      // anonymous view of a release still building).
      let state;
      for (;;) {
        try {
          state = await db.prepare("SELECT status, failure_reason FROM releases WHERE version = ?").bind(version).first();
        } catch (error) {
          // Miniflare's binding proxy can lose its connection while a build slice keeps workerd busy
          // ("other side closed"): ask again.
          output.assertAlive();
          if (performance.now() - posted.started > JOB_TIMEOUT_MS) throw error;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          continue;
        }
        if (state?.status !== "building") break;
        output.assertAlive();
        if (performance.now() - posted.started > JOB_TIMEOUT_MS) throw new Error(`scale-writes: release ${version} still building`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      if (state?.status !== "published")
        throw new Error(`scale-writes: release ${version} ended ${state?.status ?? "missing"}: ${state?.failure_reason}`);
      // Published releases are public: their counts without a token.
      const release = await (await getRetrying(`${app.url}/v1/releases/${version}`, { headers: HEADERS })).json();
      const published = await waitFor(
        output,
        (entries) => entries.slice(from).find((e) => e.msg === "release published" && e.release === version),
        "release published",
      );
      const own = { ...posted.cost };
      const cost = posted.cost;
      for (const line of output.entries
        .slice(from)
        .filter((e) => (e.msg === "release build slice ended" || e.msg === "release published") && e.release === version)) {
        addLine(cost, line);
        cost.slices += 1;
      }
      record(
        row(
          "publish a release",
          products,
          `${release.counts.records.toLocaleString("en")} records, ${release.counts.record_materials.toLocaleString("en")} bill-of-materials rows`,
          published.at - posted.started,
          cost,
          own,
        ),
      );
      // The staging clean-up after the publication: its own messages.
      const cleaned = await waitFor(
        output,
        (entries) => entries.slice(from).find((e) => e.msg === "release staging rows removed" && e.release === version),
        "staging clean-up",
      );
      const cleanup = zero();
      for (const line of output.entries.slice(from).filter((e) => e.msg.startsWith("release staging rows") && e.release === version)) {
        addLine(cleanup, line);
        cleanup.slices += 1;
      }
      // No request of its own: queue work only.
      record(row("release staging clean-up", products, "10,000 rows per table and round trip", cleaned.at - published.at, cleanup, zero()));
    }
    return rows;
  } catch (error) {
    log(
      `  writes at ${products}: failed; the worker's last lines:\n${output.other.join("\n")}\n${output.entries
        .slice(-10)
        .map((e) => JSON.stringify(e))
        .join("\n")}`,
    );
    throw error;
  } finally {
    await disposeAll(targets);
    rmSync(r2, { recursive: true, force: true });
  }
}

/**
 * A GET of JSON on a connection of its own (no keep-alive), sent again for up to a minute when
 * it fails: while a release build's slice keeps workerd busy, reused kept-alive connections were
 * closed under the client ("fetch failed", three times in a row at 150,000 products). A read, so
 * sending it again changes nothing.
 */
async function getRetrying(url, { headers }) {
  const once = () =>
    new Promise((resolve, reject) => {
      const request = http.get(url, { headers, agent: false }, (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode, json: async () => JSON.parse(Buffer.concat(chunks).toString()) }));
        response.on("error", reject);
      });
      request.on("error", reject);
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await once();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/** A PATCH with the version the record has (If-Match). */
async function patch(app, output, p, token, json) {
  const current = await fetch(app.url + p, { headers: HEADERS });
  const { version } = await current.json();
  const id = randomUUID();
  const started = performance.now();
  const response = await fetch(app.url + p, {
    method: "PATCH",
    headers: {
      ...HEADERS,
      "x-request-id": id,
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "if-match": `"${version}"`,
    },
    body: JSON.stringify(json),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`scale-writes: PATCH ${p} answered ${response.status}: ${text.slice(0, 300)}`);
  const line = await waitFor(
    output,
    (entries) => entries.find((e) => e.msg === "request" && e.request_id === id),
    `log line of PATCH ${p}`,
    10_000,
  );
  return { ms, cost: addLine(zero(), line) };
}

/** The markdown table of bench/README.md, one row per write and size. */
export function writesTable(rows) {
  const lines = [
    "| write | products | what | wall ms | round trips | statements | rows read | rows written | D1 ms | longest statement ms | of which in the request | queue slices |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.write} | ${r.products.toLocaleString("en")} | ${r.detail} | ${r.wallMs.toLocaleString("en")} | ${r.roundTrips} | ${r.statements} | ` +
        `${r.rowsRead.toLocaleString("en")} | ${r.rowsWritten.toLocaleString("en")} | ${r.d1Ms.toLocaleString("en")} | ${r.longestMs} | ${r.requestLongestMs ?? "-"} | ${r.slices} |`,
    );
  }
  return lines.join("\n");
}

async function main() {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string" },
      "300k": { type: "boolean" },
      "data-dir": { type: "string" },
      only: { type: "string", multiple: true },
      port: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(
      "usage: node bench/scale-writes.mjs [--sizes 2000,30000] [--300k] [--data-dir <dir>] [--only <text>] [--port <n>] [--out <file>]",
    );
    return;
  }
  const sizes = values.sizes ? values.sizes.split(",").map((v) => Number(v.replaceAll("_", ""))) : [2_000, 30_000];
  if (values["300k"] && !sizes.includes(300_000)) sizes.push(300_000);
  const dataDir = path.resolve(values["data-dir"] ?? process.env.BENCH_SCALE_DATA ?? path.join(ROOT, "bench/.scale-data"));
  const out = path.resolve(values.out ?? path.join(ROOT, "bench/results/scale-writes.json"));
  const config = readWranglerConfig(ROOT);
  console.log("scale-writes: building the worker as a deploy does");
  const bundle = await buildWorker(ROOT, path.join(ROOT, "bench/.build"));
  const rows = [];
  for (const products of sizes) {
    const { dir, info } = await ensureSeeded(dataDir, products);
    const copy = workingCopy(dir);
    console.log(`scale-writes: ${products.toLocaleString("en")} products (a copy of ${dir})`);
    try {
      rows.push(
        ...(await runScaleWrites({
          config,
          bundle,
          d1Persist: copy.d1Persist,
          d1Id: await datasetD1Id(dir, info, config),
          products,
          port: Number(values.port ?? 0),
          only: values.only ?? [],
        })),
      );
    } finally {
      copy.remove();
    }
  }
  console.log(`\n${writesTable(rows)}`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, load: os.loadavg() }, sizes, rows }, null, 2)}\n`,
  );
  console.log(`scale-writes: wrote ${path.relative(ROOT, out)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
