// Runs before `npm run dev` / `npm start`: gives a fresh clone its local secrets and an
// up-to-date local D1 database, without prompting.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("Created .dev.vars from .dev.vars.example (local defaults; edit as you like).");
}

// CI=1 stops wrangler from asking for confirmation before it applies migrations.
const result = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local"], {
  stdio: "inherit",
  env: { ...process.env, CI: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
});
process.exit(result.status ?? 1);
