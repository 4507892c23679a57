// `wrangler d1 <command>` against the production database, for the runbook (docs/operations.md):
// wrangler's remote D1 commands want the database id in the configuration, and wrangler.jsonc has
// none (README, Deploy), so this runs them with a throwaway configuration that names it. The
// binding is DB.
//
//   npm run d1:remote -- execute DB --remote --command "SELECT count(*) FROM users"
//   npm run d1:remote -- time-travel info DB
//   npm run d1:remote -- insights DB --sort-by time
//
// --env NAME (first) picks the wrangler environment (default production).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { unstable_readConfig } from "wrangler";
import { remoteD1Config } from "./lib/remote-d1.mjs";
import { ROOT } from "./lib/wrangler.mjs";

let args = process.argv.slice(2);
let envName = "production";
if (args[0] === "--env") {
  envName = args[1];
  args = args.slice(2);
}
if (args.length === 0) {
  console.error('usage: npm run d1:remote -- [--env NAME] <wrangler d1 command>, e.g. execute DB --remote --command "SELECT 1"');
  process.exit(2);
}
const config = unstable_readConfig({ config: path.join(ROOT, "wrangler.jsonc"), env: envName }, {});
const file = await remoteD1Config(config);
try {
  const run = spawnSync(path.join(ROOT, "node_modules", ".bin", "wrangler"), ["d1", ...args, "--config", file], {
    stdio: "inherit",
    cwd: ROOT,
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(path.dirname(file), { recursive: true, force: true });
}
