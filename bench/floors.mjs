// `node bench/floors.mjs [--requests N] [--rounds R] [--bytes B]`: what the issue-24 aims can reach
// at best on this machine, measured with bare workers that do only the unavoidable part of each
// read (bench/README.md, "Issue 24", Floors). Each worker runs in its own Miniflare instance on a
// direct socket, as in `npm run bench`; requests are sent one at a time and each is charged the
// CPU time (user + system) its workerd process spent, median over rounds. Ratios are taken against
// the bench's own baselines, so a ratio here is the most the app's figure could be if the app did
// nothing but this:
//
// - `live-bare`: `/live` with the app's response headers and its one JSON access-log line, no
//   framework. Against `baseline-trivial`: the ceiling of the `/live` aim.
// - `validator`: the one D1 read of a cached product read, in a D1 session batch as the app sends it
//   (the record validator of src/services/caching/read-copies.ts, against the app's migrated schema).
//   Against `baseline-d1-select1`: the ceiling of the cached-read aims (detail, tree).
// - `body-<B>`: a worker answering B bytes of JSON held in memory (default 420,000: the bench's
//   1,000-component tree). Its cost over `baseline-trivial` is what sending the tree costs.
//
// `--throughput S` also loads each bare worker for S seconds per round as `npm run bench` does (10
// connections unless `--connections N`, one direct socket, the same log handling) and prints the same ceilings as ratios of
// requests per second, the unit of the aims: there the client and the reading of each log line
// share the machine's two cores with the worker, which CPU per request does not show. The tree's
// ceiling there comes from one more bare worker, `validator-body-<B>`, doing both; `validator-logged`
// adds the access log line to the validator.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { runLoad } from "./load.mjs";
import { workerdPids } from "./memory.mjs";
import { applyMigrations, disposeAll, readWranglerConfig, SELECT1_SCRIPT, start, TRIVIAL_SCRIPT } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    bytes: { type: "string", default: "420000" },
    throughput: { type: "string" },
    connections: { type: "string", default: "10" },
  },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const bytes = Number(values.bytes);
const connections = Number(values.connections);

// The headers the app's /live answer carries locally (no HSTS outside production), and its log line.
const LIVE_BARE = `export default {
  fetch(request) {
    const started = Date.now();
    const id = crypto.randomUUID();
    const response = new Response('{"status":"alive"}', { headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Vary": "Origin",
      "X-Request-ID": id,
    } });
    console.log(JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "request", request_id: id, method: request.method,
      path: new URL(request.url).pathname, status: 200, duration_ms: Date.now() - started, d1_round_trips: 0, limiter_calls: 0,
      client_ip: request.headers.get("cf-connecting-ip") }));
    return response;
  },
};`;

// The record validator of src/services/caching/read-copies.ts (validatorStatement("record", id)), as a session batch.
const VALIDATOR = `export default {
  async fetch(request, env) {
    const session = env.DB.withSession("first-unconstrained");
    await session.batch([session.prepare(\`SELECT coalesce(g.generation, 0) || '.' || r.generation AS generation
      FROM products p LEFT JOIN tree_generations g ON g.root_id = p.root_id
      JOIN read_generations r ON r.name = 'reference'
      WHERE p.id = ?\`).bind(1)]);
    return new Response("ok");
  },
};`;

// The validator and the access log line the app writes for every request (the issue keeps it).
const VALIDATOR_LOGGED = VALIDATOR.replace(
  'return new Response("ok");',
  `console.log(JSON.stringify({ ts: new Date().toISOString(), level: "info", msg: "request", request_id: crypto.randomUUID(),
      method: request.method, path: new URL(request.url).pathname, status: 200, duration_ms: 0, d1_round_trips: 1,
      limiter_calls: 0, client_ip: request.headers.get("cf-connecting-ip") }));
    return new Response("ok");`,
);

// Both: the cached tree's unavoidable part in one worker (the throughput ceilings use it).
const VALIDATOR_BODY = `const body = new TextEncoder().encode(JSON.stringify({ items: "x".repeat(${bytes} - 14) })).buffer;
${VALIDATOR.replace('return new Response("ok");', 'return new Response(body, { headers: { "Content-Type": "application/json" } });')}`;

const BODY = `const body = new TextEncoder().encode(JSON.stringify({ items: "x".repeat(${bytes} - 14) })).buffer;
export default { fetch() { return new Response(body, { headers: { "Content-Type": "application/json" } }); } };`;

const config = readWranglerConfig(ROOT);
const date = config.compatibility_date;
const flags = config.compatibility_flags ?? [];

/** Starts a bare worker and finds its workerd process (the one that was not there before). */
async function bare(name, options, compatibilityFlags = []) {
  const before = new Set(workerdPids());
  const target = await start(name, options, 0, false, date, compatibilityFlags);
  return { ...target, pid: workerdPids().find((pid) => !before.has(pid)) };
}

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

async function cpuPerRequest(target) {
  const send = async () => (await fetch(target.url, { headers: { "cf-connecting-ip": "10.0.0.1" } })).arrayBuffer();
  for (let i = 0; i < 100; i++) await send();
  const start = cpuTicks(target.pid);
  for (let i = 0; i < requests; i++) await send();
  return ((cpuTicks(target.pid) - start) * 10) / requests;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const targets = [];
try {
  targets.push(await bare("baseline-trivial", { script: TRIVIAL_SCRIPT }));
  targets.push(await bare("baseline-d1-select1", { script: SELECT1_SCRIPT, d1Databases: { DB: "floors-select1" } }));
  targets.push(await bare("trivial-app-flags", { script: TRIVIAL_SCRIPT }, flags));
  targets.push(await bare("live-bare", { script: LIVE_BARE }, flags));
  const validator = await bare("validator", { script: VALIDATOR, d1Databases: { DB: "floors-app" } }, flags);
  await applyMigrations(await validator.mf.getD1Database("DB"), path.join(ROOT, "migrations"));
  targets.push(validator);
  if (values.throughput !== undefined) {
    const both = await bare(`validator-body-${bytes}`, { script: VALIDATOR_BODY, d1Databases: { DB: "floors-app-body" } }, flags);
    await applyMigrations(await both.mf.getD1Database("DB"), path.join(ROOT, "migrations"));
    targets.push(both);
    const logged = await bare("validator-logged", { script: VALIDATOR_LOGGED, d1Databases: { DB: "floors-app-logged" } }, flags);
    await applyMigrations(await logged.mf.getD1Database("DB"), path.join(ROOT, "migrations"));
    targets.push(logged);
  }
  targets.push(await bare(`body-${bytes}`, { script: BODY }, flags));

  const samples = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) samples[target.name].push(await cpuPerRequest(target));
  }
  const cpu = Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, median(xs)]));
  console.log(`CPU per request (ms, ${requests} requests one at a time, median of ${rounds} rounds):`);
  for (const [name, ms] of Object.entries(cpu)) console.log(`  ${name.padEnd(22)} ${ms.toFixed(3)}`);
  const trivial = cpu["baseline-trivial"];
  const select1 = cpu["baseline-d1-select1"];
  const sending = cpu[`body-${bytes}`] - trivial;
  console.log("Ceilings (the most each aim's ratio could be, were the app to do nothing else):");
  console.log(`  /live ÷ trivial worker:                         ${(trivial / cpu["live-bare"]).toFixed(2)}  (aim 0.6)`);
  console.log(`  cached read ÷ one-query D1 worker:              ${(select1 / cpu.validator).toFixed(2)}  (aim 0.9 for the detail)`);
  console.log(`  cached ${bytes}-byte tree ÷ one-query D1 worker: ${(select1 / (cpu.validator + sending)).toFixed(2)}  (aim 0.8)`);
  if (values.throughput !== undefined) await throughputCeilings(Number(values.throughput));
} finally {
  await disposeAll(targets);
}

/** Requests per second of each bare worker under the bench's load, median of `rounds` rounds, and the ceilings as ratios of them. */
async function throughputCeilings(seconds) {
  const rps = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const request = { method: "GET", path: "/", headers: { "cf-connecting-ip": "10.0.0.1" } };
      const result = await runLoad(target.url, request, { duration: seconds, connections, maxRequests: 2_000_000 });
      if (!result.ok) throw new Error(`${target.name}: the load run failed: ${JSON.stringify(result.statusCounts)}`);
      rps[target.name].push(result.rps);
    }
  }
  const med = Object.fromEntries(Object.entries(rps).map(([name, xs]) => [name, median(xs)]));
  console.log(`Requests per second (${connections} connections, ${seconds} s, median of ${rounds} rounds):`);
  for (const [name, r] of Object.entries(med)) console.log(`  ${name.padEnd(22)} ${r.toFixed(0)}`);
  console.log("Ceilings as ratios of requests per second (the unit of the aims):");
  console.log(`  /live ÷ trivial worker:                         ${(med["live-bare"] / med["baseline-trivial"]).toFixed(2)}  (aim 0.6)`);
  console.log(
    `  cached read ÷ one-query D1 worker:              ${(med.validator / med["baseline-d1-select1"]).toFixed(2)}  (aim 0.9 for the detail)`,
  );
  console.log(`    the same with the access log line:            ${(med["validator-logged"] / med["baseline-d1-select1"]).toFixed(2)}`);
  const tree = med[`validator-body-${bytes}`] / med["baseline-d1-select1"];
  console.log(`  cached ${bytes}-byte tree ÷ one-query D1 worker: ${tree.toFixed(2)}  (aim 0.8)`);
}
