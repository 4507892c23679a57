// The startup and size budget (.ci/budgets.json), checked by CI (.ci/run): builds the production
// Worker as a deploy would (`wrangler deploy --dry-run --env production`), reads the compressed
// upload size wrangler reports, and profiles the Worker's start with `wrangler check startup`
// over that bundle. A profile samples wall time, so on a machine busy with other jobs the start
// reads longer than it costs, never shorter: the lowest of the runs counts, and the runs stop as
// soon as one is within the budget (a start that fits once fits; a regression fits in none).
// Up to --runs profiles (default 6). Writes build/budget/result.json and exits 1 when a
// measurement is over its budget.
//
//   npm run check:budget [-- --runs 6]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { overBudget, startupBusyMs, uploadSizes } from "./budget/budget-core.mjs";
import { ROOT, wrangler } from "./lib/wrangler.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "6" } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1 || runs > 10) throw new Error("--runs is 1 to 10");
const budgets = JSON.parse(readFileSync(path.join(ROOT, ".ci", "budgets.json"), "utf8"));
const out = path.join(ROOT, "build", "budget");
mkdirSync(out, { recursive: true });

const bundle = path.join(out, "worker.bundle");
const built = await wrangler(["deploy", "--dry-run", "--env", "production", "--outfile", bundle]);
const { uploadKib, gzipKib } = uploadSizes(`${built.stdout}\n${built.stderr}`);

const startups = [];
for (let i = 0; i < runs; i++) {
  const profile = path.join(out, `startup-${i + 1}.cpuprofile`);
  await wrangler(["check", "startup", "--worker", bundle, "--outfile", profile]);
  startups.push(Math.round(startupBusyMs(JSON.parse(readFileSync(profile, "utf8"))) * 10) / 10);
  if (startups.at(-1) <= budgets.startup_ms) break;
}
const startupMs = Math.min(...startups);
const load = os.loadavg()[0].toFixed(1);
const result = {
  startup_ms: startupMs,
  startup_runs_ms: startups,
  load_average: Number(load),
  upload_kib: uploadKib,
  bundle_gzip_kib: gzipKib,
  budgets,
};
writeFileSync(path.join(out, "result.json"), `${JSON.stringify(result, null, 2)}\n`);

console.log(
  `Startup: ${startupMs} ms (profiled, lowest of ${startups.join(", ")} ms; load average ${load} on ${os.availableParallelism()} cores; budget ${budgets.startup_ms} ms, Cloudflare's limit 1000 ms).\n` +
    `Bundle: ${gzipKib} KiB compressed (${uploadKib} KiB uncompressed; budget ${budgets.bundle_gzip_kib} KiB, Cloudflare's limit 3 MiB free, 10 MiB paid).`,
);
const over = overBudget({ startupMs, gzipKib }, budgets);
if (over.length > 0) {
  for (const item of over) console.error(`Over budget: ${item.name} ${item.measured} > ${item.budget} (.ci/budgets.json).`);
  console.error("The profiles are in build/budget/ (open one in Chrome DevTools, Performance) to see what the start spends its time on.");
  process.exit(1);
}
