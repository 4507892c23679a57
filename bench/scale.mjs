// `npm run bench:scale`: what each read route costs as the dataset grows (issue 30). For each size it
// serves a copy of a seeded database (bench/scale-data.mjs) with the bundled worker on its own
// Miniflare socket, sends each read route's requests one at a time, every one a cache miss, and
// reports per route the median and p99 time at the client, the rows read and the D1 time (from the
// response's Server-Timing). See bench/README.md, "Scale".
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { applyPendingMigrations, datasetD1Id, ensureSeeded, sqliteFileOf, workingCopy } from "./scale-data.mjs";
import { addImages, scaleFixture, scaleRoutes } from "./scale-routes.mjs";
import { buildWorker, disposeAll, readWranglerConfig, startApp } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const BUILD_DIR = path.join(ROOT, "bench/.build");
const DEFAULT_SIZES = [2_000, 30_000];
const LARGE = 300_000;

const USAGE = `usage: npm run bench:scale -- [options]
  --sizes <n,n,...>   base products per dataset (default ${DEFAULT_SIZES.join(",")})
  --300k              add the ${LARGE.toLocaleString("en")}-product dataset (seeding it the first time takes long)
  --data-dir <dir>    where the seeded datasets are kept between runs (default bench/.scale-data; env BENCH_SCALE_DATA)
  --requests <n>      requests per route and size (default 25)
  --only <text>       only the routes whose name contains this text (repeatable)
  --port <n>          the worker's port (default 0: any free port)
  --no-writes         skip the writes section (bench/scale-writes.mjs) even when it exists
  --out <file>        results file (default bench/results/scale.json)`;

function settings() {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string" },
      "300k": { type: "boolean" },
      "data-dir": { type: "string" },
      requests: { type: "string" },
      only: { type: "string", multiple: true },
      port: { type: "string" },
      "no-writes": { type: "boolean" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const sizes = values.sizes ? values.sizes.split(",").map((v) => Number(v.replaceAll("_", ""))) : [...DEFAULT_SIZES];
  if (values["300k"] && !sizes.includes(LARGE)) sizes.push(LARGE);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes must be positive integers\n${USAGE}`);
  const requests = Number(values.requests ?? 25);
  if (!Number.isInteger(requests) || requests < 3) throw new Error(`--requests must be an integer >= 3\n${USAGE}`);
  return {
    sizes,
    dataDir: path.resolve(values["data-dir"] ?? process.env.BENCH_SCALE_DATA ?? path.join(ROOT, "bench/.scale-data")),
    requests,
    only: values.only ?? [],
    port: Number(values.port ?? 0),
    writes: !values["no-writes"],
    out: path.resolve(values.out ?? path.join(ROOT, "bench/results/scale.json")),
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
/** Nearest-rank percentile. */
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

function costOf(response) {
  const timing = response.headers.get("server-timing") ?? "";
  const trips = /(?:^|,)\s*d1;desc="(\d+) round trips?"/.exec(timing);
  const rows = /d1-rows;desc="read (\d+), written (\d+)(?:, (\d+) unmetered)?"/.exec(timing);
  const time = /d1-time;dur=([\d.]+)/.exec(timing);
  return {
    roundTrips: trips ? Number(trips[1]) : null,
    rowsRead: rows ? Number(rows[1]) : null,
    unmetered: rows ? Number(rows[3] ?? 0) : null,
    d1Ms: time ? Number(time[1]) : null,
  };
}

/** Makes the named cache stale without touching the data: a new catalogue generation, or a KV clear marker. */
async function makeStale(kind, db, kv) {
  if (kind === "catalogue") await db.prepare("UPDATE read_generations SET generation = random() WHERE name = 'catalogue'").run();
  else await kv.put(`cache-cleared:${kind}`, String(Date.now() + 1));
}

const HEADERS = { "cf-connecting-ip": "127.0.0.1" };

async function measureRoute(app, route, requests, db, kv) {
  const samples = [];
  for (let i = 0; i < requests; i++) {
    if (route.stale) await makeStale(route.stale, db, kv);
    const url = app.url + route.url(i);
    const started = performance.now();
    const response = await fetch(url, { headers: HEADERS });
    const body = await response.arrayBuffer();
    const ms = performance.now() - started;
    if (response.status !== 200)
      throw new Error(`${route.name}: ${url} answered ${response.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
    const cache = response.headers.get("x-cache");
    if (cache === "hit") throw new Error(`${route.name}: ${url} was a cache hit; the bench measures misses`);
    samples.push({ ms, bytes: body.byteLength, ...costOf(response) });
  }
  const pick = (key) => samples.map((s) => s[key]).filter((v) => v !== null);
  const first = samples[0];
  return {
    name: route.name,
    size: route.size,
    page: route.page ?? (route.size === null ? null : 1),
    requests,
    medianMs: Number(median(pick("ms")).toFixed(2)),
    p99Ms: Number(percentile(pick("ms"), 99).toFixed(2)),
    rowsRead: pick("rowsRead").length ? median(pick("rowsRead")) : null,
    rowsReadMax: pick("rowsRead").length ? Math.max(...pick("rowsRead")) : null,
    unmetered: first.unmetered,
    d1Ms: pick("d1Ms").length ? Number(median(pick("d1Ms")).toFixed(2)) : null,
    roundTrips: first.roundTrips,
    bytes: first.bytes,
  };
}

/** Issue 30's bound on the rows a page may read: 10 x (page x size) + 1,000. */
export function rowsBound(result) {
  return result.size === null ? null : 10 * (result.page ?? 1) * result.size + 1000;
}

async function runSize(s, bundle, config, products) {
  const started = performance.now();
  const { dir: storedDir, info } = await ensureSeeded(s.dataDir, products);
  const copy = workingCopy(storedDir);
  const d1Id = await datasetD1Id(storedDir, info, config);
  const targets = [];
  try {
    const app = await startApp(config, bundle, s.port, false, {
      name: `app-${products}`,
      vars: { RATE_LIMITS_ENABLED: "false" },
      miniflare: { d1Databases: { DB: d1Id }, d1Persist: copy.d1Persist },
    });
    targets.push(app);
    const db = await app.mf.getD1Database("DB");
    const kv = await app.mf.getKVNamespace("KV");
    const migrated = await applyPendingMigrations(db);
    // One record per measured request, and one more for the unrecorded first request (number requests + 1).
    const fixture = await scaleFixture(db, Math.max(s.requests + 2, 10));
    await addImages(db, fixture.productIds, 3);
    // The bootstrap superuser is created by the first request; it and the isolate's start are not measured.
    await (await fetch(`${app.url}/v1/units`, { headers: HEADERS })).arrayBuffer();
    const routes = scaleRoutes(fixture).filter((route) => s.only.length === 0 || s.only.some((text) => route.name.includes(text)));
    const results = [];
    for (const route of routes) {
      // One unrecorded request first: the route's code paths compiled, its statements prepared once.
      await measureRoute(app, { ...route, url: (i) => route.url(i + s.requests + 1) }, 1, db, kv);
      const result = await measureRoute(app, route, s.requests, db, kv);
      results.push(result);
      const bound = rowsBound(result);
      console.log(
        `  ${result.name.padEnd(52)} ${String(result.medianMs).padStart(8)} ms  p99 ${String(result.p99Ms).padStart(8)} ms  ` +
          `rows ${String(result.rowsRead).padStart(7)}${bound !== null && result.rowsRead > bound ? ` (> ${bound})` : ""}  d1 ${result.d1Ms} ms`,
      );
    }
    // The writes (issue 30, item 4; bench/scale-writes.mjs) start a worker of their own, with the
    // release and deletion queues' consumers, on a fresh working copy once the reads are done: the
    // images added above for the reads have no stored objects, which a release build refuses.
    let writes = null;
    let writesError = null;
    if (s.writes) {
      await disposeAll(targets.splice(0));
      const { runScaleWrites } = await import(path.join(import.meta.dirname, "scale-writes.mjs"));
      const writesCopy = workingCopy(storedDir);
      try {
        writes = await runScaleWrites({ config, bundle, d1Persist: writesCopy.d1Persist, d1Id, products, port: s.port, log: console.log });
      } catch (error) {
        // The reads are measured: keep them in the results, and say the writes failed.
        console.error(error?.stack ?? error);
        writesError = String(error?.message ?? error);
      } finally {
        writesCopy.remove();
      }
    }
    const file = sqliteFileOf(copy.dir);
    return {
      products,
      dataset: info,
      migrationsApplied: migrated,
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
      routes: results,
      writes,
      writesError,
      workingCopy: file ? path.basename(file) : null,
    };
  } finally {
    await disposeAll(targets);
    copy.remove();
  }
}

function report(runs, writesTable) {
  const lines = [];
  const names = runs[0]?.routes.map((r) => r.name) ?? [];
  const header = ["route", ...runs.flatMap((run) => [`${run.products} median ms`, "p99 ms", "rows read", "D1 ms"])];
  lines.push(`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`);
  for (const name of names) {
    const cells = runs.flatMap((run) => {
      const r = run.routes.find((x) => x.name === name);
      if (!r) return ["", "", "", ""];
      const bound = rowsBound(r);
      return [r.medianMs, r.p99Ms, bound !== null && r.rowsRead > bound ? `**${r.rowsRead}**` : r.rowsRead, r.d1Ms];
    });
    lines.push(`| ${name} | ${cells.join(" | ")} |`);
  }
  if (runs.length > 1) {
    lines.push("", "Growth of the median time against the smallest dataset (aim: at most 1.5x at 30,000):", "");
    for (const name of names) {
      const base = runs[0].routes.find((x) => x.name === name);
      const ratios = runs.slice(1).map((run) => {
        const r = run.routes.find((x) => x.name === name);
        return r && base ? `${run.products}: ${(r.medianMs / base.medianMs).toFixed(2)}x` : "";
      });
      lines.push(`- ${name}: ${ratios.join(", ")}`);
    }
  }
  const writes = runs.flatMap((run) => run.writes ?? []);
  if (writes.length) lines.push("", writesTable(writes));
  return lines.join("\n");
}

async function main() {
  const s = settings();
  const config = readWranglerConfig(ROOT);
  console.log(
    `bench:scale: sizes ${s.sizes.join(", ")}; data in ${s.dataDir}; ${s.requests} requests per route, one at a time, each a cache miss`,
  );
  console.log("building the worker like a deploy (wrangler deploy --dry-run)...");
  const bundle = await buildWorker(ROOT, BUILD_DIR);
  const runs = [];
  for (const products of s.sizes) {
    console.log(`\n${products.toLocaleString("en")} base products:`);
    runs.push(await runSize(s, bundle, config, products));
  }
  const { writesTable } = await import(path.join(import.meta.dirname, "scale-writes.mjs"));
  const table = report(runs, writesTable);
  console.log(`\n${table}`);
  await mkdir(path.dirname(s.out), { recursive: true });
  await writeFile(
    s.out,
    `${JSON.stringify(
      {
        when: new Date().toISOString(),
        how: "bundle of wrangler deploy --dry-run on its own Miniflare direct socket (no wrangler dev proxy), rate limits off, one request at a time",
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadavg: os.loadavg() },
        settings: { sizes: s.sizes, requests: s.requests, only: s.only },
        runs,
        table,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwrote ${path.relative(ROOT, s.out)}`);
  const failed = runs.filter((run) => run.writesError);
  if (failed.length) {
    console.error(`the writes failed at ${failed.map((run) => run.products).join(", ")} base products (see above)`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error?.stack ?? error);
  process.exit(1);
});
