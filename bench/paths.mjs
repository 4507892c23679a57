// `node bench/paths.mjs [--ref main] [--only live,product-detail,...] [--requests N] [--seconds S] [--rounds R] [--port-base P]`:
// the working tree against another commit (default `main`), side by side in one run, on the
// scenarios of bench/scenarios.mjs that a change of the request path moves (`/live`, a product
// detail, a list, a tree; bench/README.md "One request path"). Each build gets its own instance
// (limits on, as `npm run bench` runs the app), seeded alike; then, in interleaved rounds, per
// scenario and build: the workerd process's CPU per request (N requests one at a time, from the
// scenario's client addresses in turn; what moves least on a shared machine) and requests per
// second under load (10 connections, S seconds). Medians over rounds; the ratios are per round.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { applyRotation, createRotation, runLoad } from "./load.mjs";
import { workerdPids } from "./memory.mjs";
import { buildRef } from "./refs.mjs";
import { scenarios } from "./scenarios.mjs";
import { applyMigrations, BOOTSTRAP, buildWorker, disposeAll, readWranglerConfig, startApp } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    ref: { type: "string", default: "main" },
    only: { type: "string", default: "live,product-detail,product-list,product-tree" },
    requests: { type: "string", default: "1000" },
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    "port-base": { type: "string", default: "0" },
    // Off: the request-rate limiters off on both instances, so that the CPU figures are the request path's and D1's, not the counter store's.
    limits: { type: "string", default: "on" },
  },
});
const names = values.only.split(",");
const requests = Number(values.requests);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const portBase = Number(values["port-base"]);
const log = (msg) => process.stderr.write(`${msg}\n`);
const EDGE = { "cf-connecting-ip": "127.0.0.1" };

const ticks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]);
};

async function main() {
  const current = {
    label: "this tree",
    bundle: await buildWorker(ROOT, path.join(ROOT, "bench/.build")),
    config: readWranglerConfig(ROOT),
    migrations: path.join(ROOT, "migrations"),
  };
  const other = { label: values.ref, ...(await buildRef(ROOT, values.ref, log)) };
  const builds = [other, current];
  const apps = [];
  try {
    for (const [i, build] of builds.entries()) {
      const before = new Set(workerdPids());
      const vars = values.limits === "off" ? { RATE_LIMITS_ENABLED: "false" } : {};
      const app = await startApp(build.config, build.bundle, portBase ? portBase + i : 0, false, { name: build.label, vars });
      app.pid = workerdPids().find((p) => !before.has(p));
      apps.push(app);
      app.db = await app.mf.getD1Database("DB");
      await applyMigrations(app.db, build.migrations);
      await fetch(`${app.url}/v1/units`, { headers: EDGE }).then((r) => r.text());
      app.requests = {};
      for (const name of names) {
        const scenario = scenarios.find((s) => s.name === name);
        if (!scenario) throw new Error(`unknown scenario ${name}`);
        const override = scenario.seed
          ? ((await scenario.seed({ db: app.db, fetch: (p, init) => fetch(app.url + p, init), url: app.url, bootstrap: BOOTSTRAP })) ?? {})
          : {};
        const merged = { ...scenario, ...override, headers: { ...EDGE, ...scenario.headers, ...override.headers } };
        app.requests[name] = {
          method: merged.method ?? "GET",
          path: merged.path,
          headers: merged.headers,
          pool: scenario.addresses ?? 256,
          vary: merged.vary ?? null,
        };
      }
      log(`seeded ${build.label} (${build.commit?.slice(0, 12) ?? "working tree"})`);
    }
    const results = Object.fromEntries(names.map((n) => [n, apps.map(() => ({ cpu: [], rps: [] }))]));
    for (let r = 1; r <= rounds; r++) {
      for (const name of names) {
        for (const [i, app] of apps.entries()) {
          const spec = app.requests[name];
          // CPU: requests one at a time, each from the scenario's next client address.
          const rotation = createRotation(spec.vary, spec.pool);
          const start = ticks(app.pid);
          for (let k = 0; k < requests; k++) {
            const req = applyRotation(rotation, { method: spec.method, path: spec.path, headers: { ...spec.headers } });
            const response = await fetch(app.url + req.path, { method: req.method, headers: req.headers });
            await response.arrayBuffer();
            if (response.status >= 400) throw new Error(`${app.name} ${name}: ${response.status}`);
          }
          results[name][i].cpu.push(((ticks(app.pid) - start) * 10) / requests);
          const load = await runLoad(
            app.url,
            { ...spec, rotation: createRotation(spec.vary, spec.pool) },
            { duration: seconds, connections, maxRequests: 1e6 },
          );
          results[name][i].rps.push(load.rps);
          await fetch(`${app.url}/live`, { headers: EDGE }).then((x) => x.text());
          log(
            `round ${r} ${name.padEnd(16)} ${app.name.padEnd(10)} CPU ${results[name][i].cpu.at(-1).toFixed(3)} ms/request  ${load.rps} req/s`,
          );
        }
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log(
      `\n${other.label} (${other.commit.slice(0, 7)}) against this tree, rate limits ${values.limits}: workerd CPU per request (${requests} requests one at a time) and req/s (${connections} connections, ${seconds} s), ${rounds} interleaved rounds, medians; ratios per round, median`,
    );
    console.log(
      `| scenario | CPU, ${other.label} | CPU, this tree | CPU change | req/s, ${other.label} | req/s, this tree | req/s ratio |`,
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const name of names) {
      const [a, b] = results[name];
      const cpuRatio = median(a.cpu.map((x, k) => b.cpu[k] / x));
      const rpsRatio = median(a.rps.map((x, k) => b.rps[k] / x));
      console.log(
        `| ${name} | ${median(a.cpu).toFixed(3)} ms | ${median(b.cpu).toFixed(3)} ms | ${cpuRatio >= 1 ? "+" : ""}${((cpuRatio - 1) * 100).toFixed(0)} % | ${median(a.rps)} | ${median(b.rps)} | ${rpsRatio.toFixed(2)} |`,
      );
    }
  } finally {
    await disposeAll(apps);
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
