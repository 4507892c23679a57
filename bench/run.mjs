// `npm run bench`: throughput and latency of the bundled worker on local workerd, against two
// baselines measured in the same run. See bench/README.md.
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { formatExport, runExportBench } from "./export.mjs";
import { compareHashes, formatHashCompare } from "./hash-compare.mjs";
import { ADDRESS_POOL, addressPool, applyRotation, createRotation, MAX_STEADY_ADDRESSES, rotationAddresses, runLoad } from "./load.mjs";
import { formatMedia, MEDIA_IMAGE, runMediaBench } from "./media.mjs";
import { formatMixed, runMixedBench } from "./mixed.mjs";
import { buildRef } from "./refs.mjs";
import { formatRelease, runReleaseBench } from "./release.mjs";
import {
  checkClientAddresses,
  formatAims,
  formatClientAddresses,
  formatLimiter,
  formatLogin,
  formatProducts,
  formatTable,
  summarize,
  summarizeAims,
  summarizeLimiter,
  summarizeLogin,
  summarizeProducts,
} from "./report.mjs";
import { scenarios as allScenarios } from "./scenarios.mjs";
import {
  applyMigrations,
  BOOTSTRAP,
  buildWorker,
  disposeAll,
  HOST,
  probe,
  readWranglerConfig,
  startApp,
  startBaselines,
} from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const BUILD_DIR = path.join(ROOT, "bench/.build");
const RESULTS = path.join(ROOT, "bench/results/latest.json");
const EXPORT_PRODUCTS_LABEL = "10,000";
/** Sections `--only` selects besides scenarios: each runs after the load rounds on its own instance. */
const SECTIONS = ["export", "media", "release", "mixed"];
/** The code the mixed section compares with: main at the start of the last round (end of the first, 2026-11-21; read caching came after it). */
const MIXED_BASELINE = "0ebdc11";

const USAGE = `usage: npm run bench -- [options]   (each option also reads BENCH_<NAME>, e.g. BENCH_DURATION)
  --duration <s>       seconds per load run (default 5)
  --rounds <n>         interleaved rounds; medians are taken over them (default 3)
  --connections <n>    concurrent keep-alive connections (default 10)
  --max-requests <n>   cap on responses per load run, ends a run early on a fast machine (default 200000)
  --warmup <s>         unrecorded load per target before round 1 (default 1; 0 disables)
  --addresses <n>      client addresses (CF-Connecting-IP) the requests to the app rotate through, "steady clients"
                       (default 256 from 10.0.0.0, max 65536); a scenario with its own pool (units-new-clients) keeps it
  --do-storage <kind>  where the app's Durable Objects keep their SQLite files: tmpfs (default, /dev/shm) or disk (Miniflare's default)
  --only <name>        run only this scenario (repeatable or comma-separated); baselines always run;
                       "export" selects the export section (full CSV/JSON exports of 10,000 demo products),
                       "media" the media section (10 MP JPEG uploads and their thumbnail job, in workerd and in Node),
                       "release" the release section (dataset releases of 10,000 demo products through the queue, and in Node),
                       "mixed" the mixed section (many users reading and writing, side by side with --mixed-baseline)
  --mixed-baseline <ref>  the commit the mixed section compares with (default ${MIXED_BASELINE}, the start of the last round)
  --mixed-users <n>    users in closed loops in the mixed section (default 50)
  --mixed-seconds <s>  seconds per instance per round in the mixed section (default 30)
  --port-base <n>      listen on n, n+1, ... (default 0: free ports chosen by the OS)
  --out <file>         results file (default bench/results/latest.json)
  --via-entry          serve through Miniflare's entry worker (its main port) instead of direct sockets
  --hash-runs <n>      timed Argon2id hashes per implementation in Node, before any load (default 10; 0 skips)
  --hash-warmup <n>    unrecorded hashes per implementation before those (default 3)`;

function settingsFromArgs() {
  const { values } = parseArgs({
    options: {
      duration: { type: "string" },
      rounds: { type: "string" },
      connections: { type: "string" },
      "max-requests": { type: "string" },
      addresses: { type: "string" },
      "do-storage": { type: "string" },
      warmup: { type: "string" },
      only: { type: "string", multiple: true },
      "port-base": { type: "string" },
      out: { type: "string" },
      "via-entry": { type: "boolean" },
      help: { type: "boolean", short: "h" },
      "hash-runs": { type: "string" },
      "hash-warmup": { type: "string" },
      "mixed-baseline": { type: "string" },
      "mixed-users": { type: "string" },
      "mixed-seconds": { type: "string" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const num = (name, fallback, min) => {
    const raw = values[name] ?? process.env[`BENCH_${name.toUpperCase().replace("-", "_")}`];
    const value = raw === undefined || raw === "" ? fallback : Number(raw);
    if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}\n${USAGE}`);
    return value;
  };
  const s = {
    duration: num("duration", 5, 0.5),
    rounds: Math.round(num("rounds", 3, 1)),
    connections: Math.round(num("connections", 10, 1)),
    maxRequests: Math.round(num("max-requests", 200_000, 1)),
    warmup: num("warmup", 1, 0),
    addresses: Math.round(num("addresses", ADDRESS_POOL, 1)),
    doStorage: values["do-storage"] ?? (process.env.BENCH_DO_STORAGE || "tmpfs"),
    portBase: Math.round(num("port-base", 0, 0)),
    hashRuns: Math.round(num("hash-runs", 10, 0)),
    hashWarmup: Math.round(num("hash-warmup", 3, 0)),
    only: (values.only ?? (process.env.BENCH_ONLY ? [process.env.BENCH_ONLY] : []))
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter(Boolean),
    out: path.resolve(values.out ?? process.env.BENCH_OUT ?? RESULTS),
    viaEntry: values["via-entry"] ?? ["1", "true"].includes(process.env.BENCH_VIA_ENTRY ?? ""),
    mixedBaseline: values["mixed-baseline"] ?? (process.env.BENCH_MIXED_BASELINE || MIXED_BASELINE),
    mixedUsers: Math.round(num("mixed-users", 50, 1)),
    mixedSeconds: num("mixed-seconds", 30, 1),
  };
  if (!["tmpfs", "disk"].includes(s.doStorage)) throw new Error(`--do-storage must be tmpfs or disk\n${USAGE}`);
  if (s.addresses > MAX_STEADY_ADDRESSES)
    throw new Error(`--addresses cannot exceed ${MAX_STEADY_ADDRESSES} (10.0.0.0/16; 10.1.0.0 up is the new-clients pool)`);
  for (const sc of allScenarios) if (sc.addresses !== undefined) addressPool(sc.addresses);
  if (s.maxRequests < s.connections) throw new Error("--max-requests cannot be below --connections");
  const badInstance = allScenarios.filter((sc) => !INSTANCES[sc.instance ?? "app"]);
  if (badInstance.length)
    throw new Error(
      `scenario(s) ${badInstance.map((sc) => sc.name).join(", ")}: unknown instance; known: ${Object.keys(INSTANCES).join(", ")}`,
    );
  const unknown = s.only.filter((name) => !SECTIONS.includes(name) && !allScenarios.some((sc) => sc.name === name));
  if (unknown.length)
    throw new Error(
      `unknown scenario(s) ${unknown.join(", ")}; known: ${allScenarios.map((sc) => sc.name).join(", ")}, ${SECTIONS.join(", ")}`,
    );
  return s;
}

// Cloudflare's edge adds CF-Connecting-IP to every request it forwards; the app reads it. Seeds,
// warm-up and drain requests come from 127.0.0.1; the load rotates over --addresses addresses, or
// over the scenario's own pool (`addresses`).
const EDGE_HEADERS = { "cf-connecting-ip": "127.0.0.1" };

/**
 * The app instances a scenario can run against (its `instance`, default "app"). Each is its own
 * Miniflare/workerd process running the same bundle, seeded the same way; "no-limits" starts only
 * when a selected scenario needs it.
 */
const INSTANCES = {
  app: { name: "app", vars: {} },
  // The request-rate limiters off (the failed-login and other guard budgets stay on).
  "no-limits": { name: "app-no-limits", vars: { RATE_LIMITS_ENABLED: "false" } },
  // The same app, limits on, for a scenario that grows the database (product-create: 51 products
  // rows per response), so that the reads measured on `app` keep the dataset their seeds made.
  writes: { name: "app-writes", vars: {} },
};

/** A scenario (plus what its seed returned) as the request autocannon sends. */
function toRequest(scenario, override, addresses) {
  // A scenario's own pool (e.g. NEW_CLIENT_POOL) wins over --addresses.
  const headers = { ...EDGE_HEADERS, ...scenario.headers, ...override.headers };
  const merged = { ...scenario, ...override, headers };
  let body = merged.body;
  if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) {
    body = JSON.stringify(body);
    merged.headers["content-type"] ??= "application/json";
  }
  return {
    method: merged.method ?? "GET",
    path: merged.path,
    headers: merged.headers,
    body,
    rotation: createRotation(merged.vary ?? null, scenario.addresses ?? addresses),
  };
}

async function version(pkg) {
  const json = JSON.parse(await readFile(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8"));
  return json.version;
}

/** "10.0.0.0–10.0.0.255" for a pool size or `{ first, size, unique }`. */
function describePool(pool) {
  const a = rotationAddresses(createRotation(null, pool));
  return a.unique ? `a new address per request, ${a.first}–${a.last} (${a.size}, none repeated)` : `${a.first}–${a.last}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (msg) => process.stderr.write(`${msg}\n`);

async function main() {
  const settings = settingsFromArgs();
  const scenarios = allScenarios.filter((sc) => settings.only.length === 0 || settings.only.includes(sc.name));
  const versions = { wrangler: await version("wrangler"), miniflare: await version("miniflare"), autocannon: await version("autocannon") };

  log("building: wrangler deploy --dry-run --outdir bench/.build");
  const bundle = await buildWorker(ROOT, BUILD_DIR);
  const bundleBytes = (await stat(bundle)).size;

  // Argon2id in Node, before any worker runs, so the two implementations have the machine to themselves.
  let hashCompare = null;
  if (settings.hashRuns > 0) {
    log(`argon2id in Node: ${settings.hashWarmup} warm-up + ${settings.hashRuns} timed hashes per implementation`);
    hashCompare = { loadavgBefore: os.loadavg(), ...(await compareHashes({ runs: settings.hashRuns, warmup: settings.hashWarmup })) };
  }

  const portFor = (i) => (settings.portBase ? settings.portBase + i : 0);
  const targets = [];
  let failed = false;
  try {
    const config = readWranglerConfig(ROOT);
    targets.push(...(await startBaselines(config, portFor, settings.viaEntry)));
    const instanceKeys = ["app", ...new Set(scenarios.map((sc) => sc.instance ?? "app").filter((k) => k !== "app"))];
    const instances = {};
    for (const [i, key] of instanceKeys.entries()) {
      const app = await startApp(config, bundle, portFor(2 + i), settings.viaEntry, { ...INSTANCES[key], doStorage: settings.doStorage });
      targets.push(app);
      instances[key] = app;
    }

    // Seed each instance alike: schema and reference data, then one request so the bootstrap
    // superuser exists (its Argon2id hash would otherwise land in the first measured run).
    const seeding = {};
    for (const [key, app] of Object.entries(instances)) {
      app.db = await app.mf.getD1Database("DB");
      const migrations = await applyMigrations(app.db, path.join(ROOT, "migrations"));
      log(`seeded ${app.name}: ${migrations.map((m) => `${m.file} (${m.statements})`).join(", ")}`);
      const warm = await probe(app.url, { method: "GET", path: "/v1/units", headers: EDGE_HEADERS });
      if (warm.status < 200 || warm.status > 299) {
        throw new Error(`${app.name}: warm-up GET /v1/units answered ${warm.status}: ${warm.bodySample}`);
      }
      // With limits on, a read that was counted carries RateLimit-Policy; without it the counter
      // store failed and the read went through unlimited (fail open): nothing would be measured.
      const limitsOn = app.vars.RATE_LIMITS_ENABLED !== "false";
      if (limitsOn && !warm.rateLimitPolicy) {
        throw new Error(
          `${app.name}: the warm-up read carries no RateLimit-Policy: the rate limiter's counter store is not working (see the worker output below)`,
        );
      }
      seeding[key] = {
        name: app.name,
        vars: INSTANCES[key].vars,
        doStorage: app.doStorage,
        migrations,
        warmUp: { path: "/v1/units", status: warm.status, serverTiming: warm.serverTiming },
      };
    }

    // Then the scenario seeds, each against its instance, and one probe per scenario: the first
    // request of its rotation, whose Server-Timing gives the D1 round trips and counter-store calls.
    const scenarioTargets = [];
    for (const sc of scenarios) {
      const app = instances[sc.instance ?? "app"];
      const appFetch = (p, init) => fetch(app.url + p, init);
      const override = sc.seed ? ((await sc.seed({ db: app.db, fetch: appFetch, url: app.url, bootstrap: BOOTSTRAP })) ?? {}) : {};
      const request = toRequest(sc, override, settings.addresses);
      const expectStatus = sc.expectStatus ?? null;
      const probeRequest = applyRotation(request.rotation, { ...request, headers: { ...request.headers } });
      const first = await probe(app.url, probeRequest);
      const ok = expectStatus === null ? first.status >= 200 && first.status < 300 : first.status === expectStatus;
      scenarioTargets.push({
        name: sc.name,
        kind: "scenario",
        instance: app.name,
        url: app.url,
        request,
        expectStatus,
        users: sc.users ?? 1,
        d1RoundTrips: first.d1RoundTrips,
        limiterCalls: first.limiterCalls,
        probe: first,
        probeError: ok ? null : `first request answered ${first.status}, expected ${expectStatus ?? "2xx"}: ${first.bodySample}`,
      });
      log(
        `${sc.name} (${app.name}): ${request.method} ${request.path} -> ${first.status}, Server-Timing ${first.serverTiming ?? "(none)"}`,
      );
    }

    const benchTargets = [
      ...targets.filter((t) => t.kind === "baseline").map((t) => ({ ...t, request: { method: "GET", path: "/" } })),
      ...scenarioTargets,
    ];
    const loadOpts = { duration: settings.duration, connections: settings.connections, maxRequests: settings.maxRequests };

    // autocannon stops at its deadline with up to `connections` requests still in flight, and
    // workerd finishes them (one isolate thread, first come first served). For a slow route (a
    // login is ~35 ms of Argon2id each) that is a few hundred ms of CPU spilling into the next run,
    // so after every run one cheap request is sent to the same instance and awaited: it is
    // answered once the leftovers are done. Its wait is kept as `drainMs`.
    const settle = async (t) => {
      const started = performance.now();
      await probe(t.url, t.kind === "baseline" ? { method: "GET", path: "/" } : { method: "GET", path: "/live", headers: EDGE_HEADERS });
      const drainMs = Math.round(performance.now() - started);
      await sleep(200);
      return drainMs;
    };

    if (settings.warmup > 0) {
      log(`warm-up: ${settings.warmup} s per target`);
      for (const t of benchTargets) {
        if (!t.probeError)
          t.warmupResponses = (
            await runLoad(t.url, t.request, { ...loadOpts, duration: settings.warmup, expectStatus: t.expectStatus })
          ).requests;
        await settle(t);
      }
    }

    const rounds = [];
    for (let r = 1; r <= settings.rounds; r++) {
      const runs = {};
      for (const t of benchTargets) {
        if (t.probeError) continue;
        runs[t.name] = await runLoad(t.url, t.request, { ...loadOpts, expectStatus: t.expectStatus });
        const res = runs[t.name];
        res.drainMs = await settle(t);
        log(
          `round ${r}/${settings.rounds} ${t.name.padEnd(20)} ${String(res.rps).padStart(9)} req/s  p50 ${res.p50} ms  p99 ${res.p99} ms  client cpu ${res.clientCpu}  drain ${res.drainMs} ms${res.ok ? "" : `  NOT ALL ${res.expectStatus}`}`,
        );
      }
      rounds.push({ round: r, runs });
    }

    // The export section (bench/export.mjs): its own instance, started after the load rounds so
    // that its 150,000 rows and its full exports do not share the machine with them.
    let exportResult = null;
    if (settings.only.length === 0 || settings.only.includes("export")) {
      log(`exports: loading ${EXPORT_PRODUCTS_LABEL} demo products into app-export`);
      exportResult = await runExportBench({
        root: ROOT,
        config: readWranglerConfig(ROOT),
        bundle,
        port: portFor(2 + Object.keys(instances).length),
        viaEntry: settings.viaEntry,
        doStorage: settings.doStorage,
        rounds: settings.rounds,
        log,
      });
    }

    // The media section (bench/media.mjs): its own instance with the media queue's consumer, after
    // the export so that neither shares the machine with the other.
    let mediaResult = null;
    if (settings.only.length === 0 || settings.only.includes("media")) {
      log(`media: ${MEDIA_IMAGE.width}x${MEDIA_IMAGE.height} JPEG uploads and thumbnail jobs on app-media`);
      mediaResult = await runMediaBench({
        config: readWranglerConfig(ROOT),
        bundle,
        port: portFor(3 + Object.keys(instances).length),
        viaEntry: settings.viaEntry,
        doStorage: settings.doStorage,
        log,
      });
    }

    // The release section (bench/release.mjs): its own instance with the release queue's consumer,
    // last, so that its builds share the machine with nothing else of the bench.
    let releaseResult = null;
    if (settings.only.length === 0 || settings.only.includes("release")) {
      log(`releases: loading ${EXPORT_PRODUCTS_LABEL} demo products into app-release`);
      releaseResult = await runReleaseBench({
        config: readWranglerConfig(ROOT),
        bundle,
        port: portFor(4 + Object.keys(instances).length),
        viaEntry: settings.viaEntry,
        doStorage: settings.doStorage,
        rounds: settings.rounds,
        log,
      });
    }

    // The mixed section (bench/mixed.mjs): this tree and --mixed-baseline side by side, each on an
    // instance of its own, after everything else.
    let mixedResult = null;
    if (settings.only.includes("mixed") || (settings.only.length === 0 && process.env.BENCH_MIXED !== "0")) {
      const baseline = await buildRef(ROOT, settings.mixedBaseline, log);
      const current = { label: "this tree", bundle, config: readWranglerConfig(ROOT), migrations: path.join(ROOT, "migrations") };
      mixedResult = await runMixedBench({
        builds: [current, { label: settings.mixedBaseline, ...baseline }],
        ports: [portFor(5 + Object.keys(instances).length), portFor(6 + Object.keys(instances).length)],
        users: settings.mixedUsers,
        perUser: 4,
        seconds: settings.mixedSeconds,
        rounds: settings.rounds,
        doStorage: settings.doStorage,
        log,
      });
    }

    const rows = summarize(benchTargets, rounds);
    // Client addresses: a steady pool must stay under the per-IP limits at this machine's rate
    // (sustained), a new-clients pool must not repeat; either failing marks the target FAILED.
    checkClientAddresses(rows, benchTargets, rounds);
    failed = rows.some((row) => !row.ok) || (mixedResult !== null && !mixedResult.ok);
    // Counter-store failures during the whole run (seeds included), per instance: each let a
    // request through unlimited, so the limits-on figures would understate the limiter's cost.
    const storeFailures = Object.fromEntries(Object.values(instances).map((app) => [app.name, app.logCounts.limiterUnavailable]));
    const storeFailed = Object.values(storeFailures).some((n) => n > 0);
    if (storeFailed) failed = true;
    const login = summarizeLogin(rows, rounds);
    const limiter = summarizeLimiter(rows, rounds);
    const products = summarizeProducts(rows);
    if (limiter) limiter.storeFailures = storeFailures;
    const cpus = os.cpus();
    const how =
      `bundled with wrangler ${versions.wrangler} deploy --dry-run (bench/.build/index.js, ${(bundleBytes / 1024).toFixed(0)} KiB); ` +
      `served by Miniflare ${versions.miniflare}/workerd on ${HOST}, one instance per target, ` +
      (settings.viaEntry
        ? "through Miniflare's entry worker (main port); "
        : "on direct sockets (no Miniflare entry worker), no wrangler dev proxy; ") +
      `autocannon ${versions.autocannon} in-process, ${settings.connections} connections, ` +
      `${settings.duration} s (cap ${settings.maxRequests} responses) × ${settings.rounds} rounds, interleaved; ` +
      `${settings.warmup} s warm-up per target; medians over rounds; ` +
      `Durable Object storage: SQLite files on ${instances.app.doStorage}; ` +
      `requests to the app from ${settings.addresses} rotating client addresses (CF-Connecting-IP ${describePool(settings.addresses)})` +
      scenarios
        .filter((sc) => sc.addresses !== undefined)
        .map((sc) => `, ${sc.name} from ${describePool(sc.addresses)}`)
        .join("");
    const machine = `${cpus.length} CPUs (${cpus[0]?.model?.trim() ?? "unknown"}), Node ${process.version}, ${os.platform()} ${os.release()}, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`;

    console.log(`\n${how}`);
    console.log(`machine: ${machine}`);
    console.log("latency from exact per-response times (autocannon's histogram is whole ms); ratios are the figures that count\n");
    console.log(formatTable(rows));
    console.log(`\n${formatClientAddresses(rows)}`);
    if (hashCompare) console.log(`\n${formatHashCompare(hashCompare)}`);
    if (limiter) console.log(`\n${formatLimiter(limiter)}`);
    if (storeFailed) {
      console.log(
        `\nFAILED: "rate limiter unavailable" logged by ${Object.entries(storeFailures)
          .filter(([, n]) => n > 0)
          .map(([name, n]) => `${name} (${n})`)
          .join(", ")}: ` + "those requests went through unlimited (fail open); the limits-on figures are not comparable.",
      );
    }
    if (login || hashCompare) console.log(`\n${formatLogin(login, hashCompare, { connections: settings.connections })}`);
    if (products) console.log(`\n${formatProducts(products)}`);
    if (exportResult) console.log(`\n${formatExport(exportResult)}`);
    if (exportResult && !exportResult.aimMet) failed = true;
    if (mediaResult) console.log(`\n${formatMedia(mediaResult)}`);
    if (releaseResult) console.log(`\n${formatRelease(releaseResult)}`);
    if (releaseResult && !releaseResult.aimMet) failed = true;
    if (mixedResult) console.log(`\n${formatMixed(mixedResult)}`);
    const aims = summarizeAims(rows, mediaResult);
    console.log(`\n${formatAims(aims)}`);

    const document = {
      timestamp: new Date().toISOString(),
      ok: !failed,
      how,
      settings: { ...settings, out: path.relative(ROOT, settings.out), scenarios: scenarios.map((sc) => sc.name) },
      machine: {
        cpus: cpus.length,
        cpuModel: cpus[0]?.model?.trim() ?? null,
        totalMemGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
        loadavg: os.loadavg(),
      },
      versions,
      build: { command: 'wrangler deploy --dry-run --outdir bench/.build --env=""', bundleBytes },
      seeding: { migrations: seeding.app.migrations, warmUp: seeding.app.warmUp, instances: seeding },
      targets: benchTargets.map((t) => ({
        name: t.name,
        kind: t.kind,
        instance: t.instance ?? null,
        request: { method: t.request.method, path: t.request.path },
        varied: t.kind === "scenario" ? (t.request.rotation.vary ? "client address and vary(i)" : "client address") : null,
        requestsSent: t.request.rotation?.next ?? null,
        rateLimitPolicy: t.probe?.rateLimitPolicy ?? null,
        expectStatus: t.expectStatus ?? "2xx",
        d1RoundTrips: t.d1RoundTrips,
        limiterCalls: t.limiterCalls ?? null,
        serverTiming: t.probe?.serverTiming ?? null,
        probeError: t.probeError ?? null,
      })),
      summary: rows,
      // Argon2id: both implementations timed in Node (null with --hash-runs 0), and what the login
      // scenarios show inside workerd (null when none ran). See bench/README.md, Argon2id.
      hashCompare,
      login,
      // The limiter's cost to a read against units-no-limits: `steady` (units) and `newClients`
      // (units-new-clients), aims judged on steady (null unless units-no-limits and one of them ran). See bench/README.md, The limiter.
      limiter,
      // The four products scenarios (issue 5): req/s, p99, D1 round trips, req/s ÷ select1, and
      // whether each read reaches half the select1 baseline (null when none ran). See bench/README.md, Products.
      products,
      // Full CSV and JSON exports of the demo dataset against raw reads of the same rows (null
      // unless selected). See bench/README.md, Exports.
      export: exportResult,
      // Uploads of a 10 MP JPEG (orientation 6 and 1) and their thumbnail job through HTTP, and the
      // same calls in Node (null unless selected). See bench/README.md, Media.
      media: mediaResult,
      // Dataset releases of the demo dataset through the queue against raw reads of the same rows,
      // and the build's memory in Node (null unless selected). See bench/README.md, Releases.
      release: releaseResult,
      // The mixed workload against --mixed-baseline, side by side (null unless selected). See bench/README.md, Mixed reads and writes.
      mixed: mixedResult,
      // Issue 24's Aims table: each figure, its aim and whether this run meets it (null: not run). See bench/README.md, Issue 24.
      aims,
      storeFailures,
      rounds,
    };
    await mkdir(path.dirname(settings.out), { recursive: true });
    await writeFile(settings.out, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`\nwrote ${path.relative(process.cwd(), settings.out)}`);
  } catch (error) {
    for (const app of targets.filter((t) => t.name.startsWith("app"))) {
      if (app.logTail.length) log(`last ${app.name} worker output:\n${app.logTail.join("\n")}`);
    }
    throw error;
  } finally {
    await disposeAll(targets);
  }
  if (failed) {
    log("bench: at least one target answered something other than its expected status, or the counter store failed; see FAILED above");
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(`bench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
});
