// Remote D1 commands of wrangler 4.86 (`d1 migrations apply --remote`, `d1 execute --remote`) want
// the database's id in the configuration, and wrangler.jsonc deliberately has none (wrangler's
// deploy finds the database by name; README, Deploy). This writes a throwaway configuration that
// names each D1 binding with the id the account gives its database_name, for those commands only.
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { jsonOutput, ROOT, wrangler } from "./wrangler.mjs";

/** Writes the configuration (in a new temporary folder) and returns its path. `config` is wrangler's reading of one environment. */
export async function remoteD1Config(config) {
  const listed = jsonOutput((await wrangler(["d1", "list", "--json"])).stdout);
  const databases = (config.d1_databases ?? []).map((db) => {
    const id = db.database_id ?? listed.find((found) => found.name === db.database_name)?.uuid;
    if (!id) throw new Error(`the account has no D1 database named ${db.database_name}: run \`npm run setup:production\` first`);
    return {
      binding: db.binding,
      database_name: db.database_name,
      database_id: id,
      migrations_dir: path.resolve(ROOT, db.migrations_dir ?? "migrations"),
    };
  });
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "relab-d1-")), "wrangler.json");
  writeFileSync(
    file,
    JSON.stringify({ name: config.name, compatibility_date: config.compatibility_date, d1_databases: databases }, null, 2),
  );
  return file;
}
