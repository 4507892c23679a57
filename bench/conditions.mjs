// `node bench/conditions.mjs [--requests N] [--seconds S] [--connections C] [--rounds R] [--port-base P]`:
// the bundle under the conditions of `npm run bench` and under wrangler's own binding options
// (`unstable_getMiniflareWorkerOptions`: the static-assets router in front, the queue consumers
// attached, state persisted on disk, served through Miniflare's entry worker), then under the
// latter with one difference taken away at a time, so that what costs the difference is named
// (bench/README.md "The bench under wrangler's options"). For each: the workerd process's CPU
// per request (`/live` and a cached product read, one request at a time), and requests per second
// with C connections against a trivial worker served the same way (entry worker or direct socket).
// Rate limits are off everywhere.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { runLoad } from "./load.mjs";
import { workerdPids } from "./memory.mjs";
import { seedMixed } from "./mixed.mjs";
import { applyMigrations, buildWorker, HOST, readWranglerConfig, startApp, TRIVIAL_SCRIPT } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "1500" },
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "32" },
    rounds: { type: "string", default: "2" },
    "port-base": { type: "string", default: "0" },
    "no-build": { type: "boolean" },
  },
});
const requests = Number(values.requests);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const portBase = Number(values["port-base"]);
let nextPort = portBase;
const port = () => (portBase ? nextPort++ : 0);
const log = (msg) => process.stderr.write(`${msg}\n`);
const EDGE = { "cf-connecting-ip": "127.0.0.1" };

/** Starts a Miniflare and returns it with its URL (direct socket or entry) and its workerd pid. */
async function startMiniflare(name, options, direct) {
  const before = new Set(workerdPids());
  const socket = port();
  const sockets = direct ? { unsafeDirectSockets: [{ host: HOST, port: socket }] } : {};
  const mf = new Miniflare({
    host: HOST,
    port: direct ? 0 : socket,
    logRequests: false,
    handleRuntimeStdio: (stdout, stderr) => (stdout.resume(), stderr.resume()),
    ...options,
    ...(options.workers ? { workers: [{ ...options.workers[0], ...sockets }, ...options.workers.slice(1)] } : sockets),
  });
  let url = await mf.ready;
  if (direct) url = await mf.unsafeGetDirectURL(options.workers?.[0]?.name);
  const pid = workerdPids().find((p) => !before.has(p));
  return { name, mf, url: url.href.replace(/\/$/, ""), pid };
}

/**
 * The app as wrangler would run it locally: the worker options wrangler derives from
 * wrangler.jsonc (bindings, queue consumers, the assets directory with its router), the deploy
 * bundle as the script, every store persisted on disk under a temporary directory, served
 * through Miniflare's entry worker; `without` takes one of those away.
 */
async function startWrangler(bundle, without = null) {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(ROOT, "wrangler.jsonc"));
  const persist = mkdtempSync(path.join(os.tmpdir(), "relab-conditions-"));
  const worker = {
    ...workerOptions,
    name: "relab-api-local",
    modules: true,
    scriptPath: bundle,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    bindings: {
      ...workerOptions.bindings,
      RATE_LIMITS_ENABLED: "false",
      AUTH_TOKEN_SECRET: "conditions-secret-0123456789abcdef0123456789abcdef",
      DATA_ENCRYPTION_KEY: "7d3f0c9a1b2e4d5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b",
      BOOTSTRAP_SUPERUSER_EMAIL: "bench-admin@relab.localhost",
      BOOTSTRAP_SUPERUSER_PASSWORD: "bench-password-not-secret",
    },
  };
  const taken = without ? without.split(" and ") : [];
  if (taken.includes("assets")) delete worker.assets;
  if (taken.includes("queue consumers")) delete worker.queueConsumers;
  const stores = taken.includes("disk")
    ? { durableObjectsPersist: mkdtempSync(path.join("/dev/shm", "relab-conditions-do-")) }
    : {
        d1Persist: path.join(persist, "d1"),
        kvPersist: path.join(persist, "kv"),
        r2Persist: path.join(persist, "r2"),
        cachePersist: path.join(persist, "cache"),
        durableObjectsPersist: path.join(persist, "do"),
      };
  const app = await startMiniflare(
    `wrangler${without ? ` without ${without}` : ""}`,
    { workers: [worker], ...stores, cf: false },
    taken.includes("entry worker"),
  );
  return { ...app, cleanup: () => rmSync(persist, { recursive: true, force: true }) };
}

async function seed(app) {
  app.db = await app.mf.getD1Database("DB", app.workerName);
  await applyMigrations(app.db, path.join(ROOT, "migrations"));
  await fetch(`${app.url}/v1/units`, { headers: EDGE }).then((r) => r.text());
  const { people } = await seedMixed(app, { users: 1, perUser: 1 });
  app.detail = `/v1/products/${people[0].products[0].id}`;
  for (let i = 0; i < 20; i++) await fetch(app.url + app.detail, { headers: EDGE }).then((r) => r.arrayBuffer());
}

function ticks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** workerd CPU (user + system, ms) per request of `path`, sent one at a time. */
async function cpuPerRequest(target, requestPath) {
  const start = ticks(target.pid);
  for (let i = 0; i < requests; i++) {
    const response = await fetch(target.url + requestPath, {
      headers: { ...EDGE, "cf-connecting-ip": `10.8.${(i >> 8) & 255}.${i & 255}` },
    });
    await response.arrayBuffer();
  }
  return ((ticks(target.pid) - start) * 10) / requests;
}

async function main() {
  const bundle = values["no-build"] ? path.join(ROOT, "bench/.build/index.js") : await buildWorker(ROOT, path.join(ROOT, "bench/.build"));
  const config = readWranglerConfig(ROOT);
  const date = config.compatibility_date;
  const trivialDirect = await startMiniflare(
    "trivial, direct socket",
    { script: TRIVIAL_SCRIPT, modules: true, compatibilityDate: date },
    true,
  );
  const trivialEntry = await startMiniflare(
    "trivial, entry worker",
    { script: TRIVIAL_SCRIPT, modules: true, compatibilityDate: date },
    false,
  );
  const bench = await startApp(config, bundle, port(), false, { name: "the bench's own", vars: { RATE_LIMITS_ENABLED: "false" } });
  bench.pid = workerdPids().find((p) => ![trivialDirect.pid, trivialEntry.pid].includes(p));
  const apps = [{ ...bench, direct: true }];
  // "entry worker": served on a direct socket. The assets binding still puts its router before
  // the app there (measured: /live 1.24 ms of CPU with it, 0.59 without), hence the pair and the
  // last row, which takes away every difference at once.
  for (const without of [
    null,
    "assets",
    "queue consumers",
    "disk",
    "entry worker",
    "entry worker and assets",
    "entry worker and assets and queue consumers and disk",
  ]) {
    const app = await startWrangler(bundle, without);
    app.workerName = "relab-api-local";
    apps.push({ ...app, direct: without?.split(" and ").includes("entry worker") ?? false });
  }
  const all = [trivialDirect, trivialEntry, ...apps];
  try {
    for (const app of apps) {
      log(`seeding ${app.name}`);
      await seed(app);
    }
    const rows = new Map(apps.map((app) => [app.name, { live: [], detail: [], liveRatio: [], detailRps: [] }]));
    const trivialRps = { direct: [], entry: [] };
    for (let r = 1; r <= rounds; r++) {
      for (const [kind, trivial] of [
        ["direct", trivialDirect],
        ["entry", trivialEntry],
      ]) {
        const run = await runLoad(trivial.url, { method: "GET", path: "/" }, { duration: seconds, connections, maxRequests: 1e6 });
        trivialRps[kind].push(run.rps);
      }
      for (const app of apps) {
        const row = rows.get(app.name);
        row.live.push(await cpuPerRequest(app, "/live"));
        row.detail.push(await cpuPerRequest(app, app.detail));
        const live = await runLoad(
          app.url,
          { method: "GET", path: "/live", headers: EDGE },
          { duration: seconds, connections, maxRequests: 1e6 },
        );
        row.liveRatio.push(live.rps / trivialRps[app.direct ? "direct" : "entry"].at(-1));
        const detail = await runLoad(
          app.url,
          { method: "GET", path: app.detail, headers: EDGE },
          { duration: seconds, connections, maxRequests: 1e6 },
        );
        row.detailRps.push(detail.rps);
        log(
          `round ${r} ${app.name}: /live ${row.live.at(-1).toFixed(3)} ms CPU, ${live.rps} req/s; detail ${row.detail.at(-1).toFixed(3)} ms CPU, ${detail.rps} req/s`,
        );
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(
      `\n${connections} connections, ${seconds} s per run, ${rounds} rounds; CPU per request from ${requests} requests one at a time (medians); rate limits off; ` +
        `trivial worker ${median(trivialRps.direct)} req/s on a direct socket, ${median(trivialRps.entry)} through the entry worker`,
    );
    console.log(
      "| conditions | `/live` CPU per request | `/live` ÷ trivial (same serving) | cached product read CPU per request | cached product read req/s |",
    );
    console.log("|---|---|---|---|---|");
    for (const app of apps) {
      const row = rows.get(app.name);
      console.log(
        `| ${app.name} | ${median(row.live).toFixed(3)} ms | ${median(row.liveRatio).toFixed(2)} | ${median(row.detail).toFixed(3)} ms | ${median(row.detailRps)} |`,
      );
    }
  } finally {
    await Promise.allSettled(all.map((t) => t.mf.dispose()));
    for (const app of apps) app.cleanup?.();
    bench.removeStorage?.();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
