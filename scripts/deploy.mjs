// `npm run deploy`: applies the D1 migrations the production database lacks, then deploys the
// Worker (README, Deploy; docs/operations.md, Deploying). Migrations go first and must be
// add-only (new tables, new nullable columns, new indexes), so that the Worker still running
// until the deploy completes, and any version `wrangler rollback` returns to, works with them.
//
//   npm run deploy [-- --env production]
import { rmSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { unstable_readConfig } from "wrangler";
import { remoteD1Config } from "./lib/remote-d1.mjs";
import { ROOT, runWrangler } from "./lib/wrangler.mjs";

const { values } = parseArgs({ options: { env: { type: "string", default: "production" } } });
const config = unstable_readConfig({ config: path.join(ROOT, "wrangler.jsonc"), env: values.env }, {});
const configFile = await remoteD1Config(config);

async function step(args) {
  console.log(`\n$ wrangler ${args.join(" ")}`);
  const result = await runWrangler(args, { env: { CI: "1" } });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.code !== 0) {
    console.error(`\nwrangler ${args[0]} failed (exit ${result.code}); nothing after it ran.`);
    process.exit(result.code ?? 1);
  }
}

try {
  for (const db of config.d1_databases ?? []) await step(["d1", "migrations", "apply", db.binding, "--remote", "--config", configFile]);
} finally {
  rmSync(path.dirname(configFile), { recursive: true, force: true });
}
await step(["deploy", "--env", values.env]);
