// `npm run bench:profile -- <scenario> [--requests N] [--top N]`: where the app's CPU time goes
// for one scenario of bench/scenarios.mjs. Builds like `npm run bench` (bench/.build), starts the
// app alone on Miniflare with workerd's inspector open, runs the scenario's seed, sends a few
// unrecorded requests, then records a V8 CPU profile of the app worker's isolate over N requests
// sent one at a time and prints the self time per function (and per bundled source file), the
// share of idle time (waiting for D1, the counter store, ...), and the mean wall time per request.
// The D1 database runs in another isolate of the same workerd process: its SQLite work shows as
// the app's idle time, not in the table. It also prints the CPU time (user + system) the whole
// workerd process spent per request over the same requests, with the profiler off: on a shared
// machine that figure moves much less than wall time (the app's isolate, D1, the counter store).
//
//   npm run bench:profile -- product-tree --requests 200        # the whole flow, building first
//   node bench/profile.mjs live --requests 3000 --no-build      # reuse bench/.build
//   node bench/profile.mjs units --var RATE_LIMITS_ENABLED=false # override a wrangler.jsonc variable
//   node bench/profile.mjs product-detail --inclusive           # also time per function with its callees
//
// Requests come from `--addresses N` client addresses in turn (default 256, the bench's steady
// clients: each counter object already in use); `--addresses 0` gives every request a new one.

import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { workerdPids } from "./memory.mjs";
import { runMixed, seedMixed } from "./mixed.mjs";
import { buildRef } from "./refs.mjs";
import { scenarios } from "./scenarios.mjs";
import { applyMigrations, BOOTSTRAP, buildWorker, disposeAll, readWranglerConfig, startApp } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const EDGE = { "cf-connecting-ip": "127.0.0.1" };

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: "string" },
    top: { type: "string" },
    "inspector-port": { type: "string" },
    "no-build": { type: "boolean" },
    addresses: { type: "string" },
    var: { type: "string", multiple: true },
    inclusive: { type: "boolean" },
    ref: { type: "string" },
    port: { type: "string" },
    seconds: { type: "string" },
    users: { type: "string" },
  },
});
const name = positionals[0];
// `mixed`: the mixed workload of bench/mixed.mjs (--users N in closed loops for --seconds S), not one request at a time.
const scenario = name === "mixed" ? { name } : scenarios.find((s) => s.name === name);
if (!scenario) {
  console.error(
    `usage: npm run bench:profile -- <scenario> [--requests N] [--top N]; scenarios: ${scenarios.map((s) => s.name).join(", ")}`,
  );
  process.exit(2);
}
const requests = Number(values.requests ?? 200);
const top = Number(values.top ?? 30);
const inspectorPort = Number(values["inspector-port"] ?? 9330);
const appPort = Number(values.port ?? 0);
const addresses = Number(values.addresses ?? 256);
const vars = Object.fromEntries((values.var ?? []).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
/** Request i's client address: one of `addresses` in turn, or a new one per request when 0. */
const clientAddress = (i) => {
  const n = addresses > 0 ? i % addresses : i;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function connect(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  let next = 1;
  const pending = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.id && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result);
    }
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Self time per function and per source file, from a CDP CPU profile. */
function summarise(profile) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
  const total = dt.reduce((a, b) => a + b, 0);
  const fns = new Map();
  for (const [id, us] of self) {
    const { callFrame: f } = byNode.get(id);
    const key = `${f.functionName || "(anonymous)"}  ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ""}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  // Inclusive: each sample charged once to every function on its stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const label = (id) => {
    const { callFrame: f } = byNode.get(id);
    return `${f.functionName || "(anonymous)"}  ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ""}`;
  };
  const inclusive = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) seen.add(label(id));
    for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (dt[i] ?? 0));
  }
  return { total, fns: [...fns].sort((a, b) => b[1] - a[1]), inclusive: [...inclusive].sort((a, b) => b[1] - a[1]) };
}

async function main() {
  // --ref: another commit's worker (bench/refs.mjs), with its own configuration and migrations.
  const ref = values.ref ? await buildRef(ROOT, values.ref, (m) => console.error(m)) : null;
  const bundle = ref
    ? ref.bundle
    : values["no-build"]
      ? path.join(ROOT, "bench/.build/index.js")
      : await buildWorker(ROOT, path.join(ROOT, "bench/.build"));
  const config = ref ? ref.config : readWranglerConfig(ROOT);
  const app = await startApp(config, bundle, appPort, false, { vars, miniflare: { inspectorPort } });
  try {
    app.db = await app.mf.getD1Database("DB");
    await applyMigrations(app.db, ref ? ref.migrations : path.join(ROOT, "migrations"));
    if (name === "mixed") return await profileMixed(app);
    await fetch(`${app.url}/v1/units`, { headers: EDGE }).then((r) => r.text());
    const override = scenario.seed
      ? ((await scenario.seed({ db: app.db, fetch: (p, init) => fetch(app.url + p, init), url: app.url, bootstrap: BOOTSTRAP })) ?? {})
      : {};
    const request = { ...scenario, ...override, headers: { ...EDGE, ...scenario.headers, ...override.headers } };
    let body = request.body;
    if (body !== undefined && typeof body !== "string") {
      body = JSON.stringify(body);
      request.headers["content-type"] ??= "application/json";
    }
    const send = async (i) => {
      const extra = request.vary?.(i) ?? {};
      const response = await fetch(app.url + request.path, {
        method: request.method,
        headers: { ...request.headers, ...extra.headers, "cf-connecting-ip": clientAddress(i) },
        body: extra.body ?? body,
      });
      await response.arrayBuffer();
      if (response.status >= 400) throw new Error(`${request.method} ${request.path} answered ${response.status}`);
    };
    for (let i = 0; i < 20; i++) await send(i);

    // CPU time of the workerd process over the same number of requests, before any profiling.
    const pid = workerdPids()[0];
    const ticks = () => {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      return Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (1/100 s)
    };
    const cpuStart = ticks();
    const cpuWall = performance.now();
    for (let i = 0; i < requests; i++) await send(100_000 + i);
    const cpuMs = ((ticks() - cpuStart) * 10) / requests;
    const cpuWallMs = (performance.now() - cpuWall) / requests;

    const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
    const target = targets.find((t) => /core:user:/.test(t.title ?? t.id ?? "") && !/RateLimiter|CameraRelay/.test(t.title)) ?? targets[0];
    const cdp = await connect(target.webSocketDebuggerUrl);
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
    await cdp.send("Profiler.start");
    const started = performance.now();
    for (let i = 0; i < requests; i++) await send(1000 + i);
    const wall = performance.now() - started;
    const { profile } = await cdp.send("Profiler.stop");
    cdp.close();

    const { total, fns, inclusive } = summarise(profile);
    const ms = (us) => (us / 1000 / requests).toFixed(3);
    const idle = fns.filter(([k]) => /^\(idle\)/.test(k)).reduce((a, [, us]) => a + us, 0);
    console.log(
      `${name}: workerd CPU ${cpuMs.toFixed(3)} ms per request (user + system, ${requests} requests one at a time, ${cpuWallMs.toFixed(2)} ms wall each, no profiler)`,
    );
    console.log(`${name}: ${requests} requests one at a time, ${(wall / requests).toFixed(2)} ms wall each; isolate ${target.title}`);
    console.log(
      `profile ${(total / 1000).toFixed(0)} ms: busy ${ms(total - idle)} ms per request, idle ${ms(idle)} ms per request (waiting: D1, counter store, I/O)`,
    );
    console.log("self ms/req  share  function  file:line");
    for (const [key, us] of fns.slice(0, top))
      console.log(`${ms(us).padStart(11)}  ${((100 * us) / total).toFixed(1).padStart(4)} %  ${key}`);
    if (values.inclusive) {
      console.log("total ms/req (self + callees)  share  function  file:line");
      for (const [key, us] of inclusive.slice(0, top))
        console.log(`${ms(us).padStart(11)}  ${((100 * us) / total).toFixed(1).padStart(4)} %  ${key}`);
    }
  } finally {
    await disposeAll([app]);
  }
}

/** Where the isolate's time goes under the mixed workload: workerd CPU per request over a run without the profiler, then a run under it. */
async function profileMixed(app) {
  const seconds = Number(values.seconds ?? 20);
  const users = Number(values.users ?? 20);
  const seeded = await seedMixed(app, { users, perUser: 4 });
  const world = {
    tag: "profile",
    next: users * 4,
    materialIds: seeded.materialIds,
    people: seeded.people.map((p, u) => ({ ...p, address: `10.9.0.${u}` })),
  };
  const pid = workerdPids()[0];
  const plain = await runMixed(app.url, world, { seconds, pid, seed: 1 });
  console.log(
    `mixed: ${plain.rps} req/s, workerd CPU ${plain.cpuMsPerRequest} ms per request (${plain.cpuCores} cores), ${JSON.stringify(plain.statuses)}`,
  );
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const target = targets.find((t) => /core:user:/.test(t.title ?? t.id ?? "") && !/RateLimiter|CameraRelay/.test(t.title)) ?? targets[0];
  const cdp = await connect(target.webSocketDebuggerUrl);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  const profiled = await runMixed(app.url, world, { seconds, pid, seed: 2 });
  const { profile } = await cdp.send("Profiler.stop");
  cdp.close();
  const { total, fns, inclusive } = summarise(profile);
  const n = profiled.requests;
  const ms = (us) => (us / 1000 / n).toFixed(3);
  const idle = fns.filter(([k]) => /^\(idle\)/.test(k)).reduce((a, [, us]) => a + us, 0);
  console.log(
    `profiled run: ${profiled.rps} req/s, ${n} requests; isolate busy ${ms(total - idle)} ms per request (the rest of workerd's CPU: D1, the cache, other isolates)`,
  );
  console.log("self ms/req  share  function  file:line");
  for (const [key, us] of fns.slice(0, top))
    console.log(`${ms(us).padStart(11)}  ${((100 * us) / total).toFixed(1).padStart(4)} %  ${key}`);
  if (values.inclusive) {
    console.log("total ms/req (self + callees)  share  function  file:line");
    for (const [key, us] of inclusive.slice(0, top))
      console.log(`${ms(us).padStart(11)}  ${((100 * us) / total).toFixed(1).padStart(4)} %  ${key}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
