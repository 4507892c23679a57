// Loads a database backup (src/services/operations/backup.ts; docs/operations.md, Backups) into an EMPTY D1
// database, local or remote, and checks it: every file against the size and SHA-256 its manifest
// gives before anything is loaded, every table's row count after.
//
//   npm run restore -- <backup> [--to local|remote] [--env production] [--persist-to DIR]
//                               [--from local|remote] [--from-persist-to DIR] [--database NAME]
//                               [--verify-only] [--keep DIR]
//
// <backup>            a folder holding manifest.json and the table files (as downloaded), or a
//                     backup id (20260501T031700Z, or backups/20260501T031700Z) read from the bucket
// --to                the database to load: local (default; the state of `npm start`, or
//                     --persist-to DIR) or remote (the account's; with --env production)
// --from              where the bucket of a backup id is (default: as --to); --from-persist-to DIR
//                     is its local state directory (default: --persist-to)
//
// Locally the load is one D1 batch through Miniflare (wrangler's local execute stops at a few
// hundred MB of SQL); remotely one `wrangler d1 execute --remote --file`, which D1 imports.
// --database          locally the binding (default DB); remotely the database's name in the
//                     account (default: wrangler.jsonc's, which must then be empty: restore into
//                     a new database made with `npx wrangler d1 create NAME` instead)
// --verify-only       check the files (sizes, SHA-256, gzip) and stop
// --keep DIR          keep the files and the SQL script in DIR (default: a temporary folder, removed)
//
// The target must hold no table (a fresh `wrangler d1 create`, or a new --persist-to folder): the
// backup brings its schema, its d1_migrations rows included, so the migrations applied afterwards
// (`npm run db:migrate:local`, or `npm run deploy`) are only those newer than the backup.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import {
  BACKUP_FORMAT_1,
  backupFiles,
  countMismatches,
  countQuery,
  EXISTING_TABLES_QUERY,
  parseManifest,
  restorePlan,
  restoreSql,
  restoreStatements,
  verifyFile,
} from "./backup/restore-core.mjs";
import { openLocalState } from "./lib/local-d1.mjs";
import { remoteD1Config } from "./lib/remote-d1.mjs";
import { jsonOutput, ROOT, runWrangler, wrangler } from "./lib/wrangler.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    to: { type: "string", default: "local" },
    from: { type: "string" },
    env: { type: "string" },
    "persist-to": { type: "string" },
    "from-persist-to": { type: "string" },
    database: { type: "string" },
    "verify-only": { type: "boolean", default: false },
    keep: { type: "string" },
  },
});

function fail(message) {
  console.error(`restore: ${message}`);
  process.exit(1);
}

if (positionals.length !== 1) fail("name one backup: a folder with manifest.json, or a backup id such as 20260501T031700Z");
for (const [flag, value] of [
  ["--to", values.to],
  ["--from", values.from ?? values.to],
]) {
  if (value !== "local" && value !== "remote") fail(`${flag} is local or remote`);
}
const from = values.from ?? values.to;
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
// wrangler's reading of wrangler.jsonc, loaded only when the bucket or a remote database is needed (loading wrangler costs seconds).
let readConfig = null;
const wranglerConfig = async () => {
  if (!readConfig) {
    const { unstable_readConfig } = await import("wrangler");
    readConfig = unstable_readConfig({ config: path.join(ROOT, "wrangler.jsonc"), env: values.env }, {});
  }
  return readConfig;
};
const work = values.keep ? path.resolve(values.keep) : mkdtempSync(path.join(os.tmpdir(), "relab-restore-"));
mkdirSync(work, { recursive: true });

try {
  const source = positionals[0];
  const folder = existsSync(source) && statSync(source).isDirectory() ? path.resolve(source) : null;
  const id = folder ? null : source.replace(/^backups\//, "").replace(/\/$/, "");
  if (id !== null && !/^\d{8}T\d{6}Z$/.test(id)) fail(`${source} is neither a folder nor a backup id (20260501T031700Z)`);
  const reader = folder ? { read: async (file) => readFileSync(path.join(folder, file)), close: async () => {} } : await bucketReader(id);
  const read = reader.read;

  // 1. The manifest and every file, checked before anything is loaded.
  const manifest = parseManifest((await read("manifest.json")).toString("utf8"));
  const texts = new Map();
  let compressed = 0;
  for (const file of backupFiles(manifest)) {
    const bytes = new Uint8Array(await read(file.file));
    await verifyFile(file, bytes);
    if (!folder) writeFileSync(path.join(work, file.file), bytes);
    // Node's zlib reads the file's gzip members one after the other.
    texts.set(file.name, gunzipSync(bytes).toString("utf8"));
    compressed += bytes.length;
  }
  await reader.close();
  const rows = manifest.tables.reduce((sum, table) => sum + table.rows, 0);
  const indexes = manifest.indexes.length > 0 ? ` and ${manifest.indexes.length} full-text indexes` : "";
  console.log(
    `Backup ${manifest.id}: ${manifest.tables.length} tables${indexes}, ${rows} rows, ${(compressed / 1e6).toFixed(1)} MB compressed; sizes and SHA-256 match the manifest (${seconds()} s).`,
  );
  if (manifest.format === BACKUP_FORMAT_1 && manifest.rebuild.length > 0) {
    console.log(
      `A backup of format ${BACKUP_FORMAT_1}: ${manifest.rebuild.join(", ")} will be rebuilt from every row of its content, which is right only for an index over all of them (docs/operations.md, Restoring a backup).`,
    );
  }
  if (manifest.read_generations?.changed) {
    console.log("Writes happened while it ran: the read caches get fresh generations after the load.");
  }
  if (values["verify-only"]) process.exit(0);

  // 2. The target must be empty.
  const target = await openTarget();
  const existing = await target.all(EXISTING_TABLES_QUERY);
  if (existing.length > 0) {
    await target.close();
    fail(
      `the target database is not empty (${existing
        .slice(0, 5)
        .map((t) => t.name)
        .join(", ")}${existing.length > 5 ? ", ..." : ""}): restore into a new one (docs/operations.md, Restoring)`,
    );
  }

  // 3. One load, all or nothing: one D1 batch locally, one import remotely.
  const plan = restorePlan(manifest, texts);
  console.log(`Loading ${rows} rows into the ${values.to} database...`);
  try {
    await target.load(plan);
  } catch (error) {
    await target.close();
    const message = String(error?.message ?? error);
    if (/FOREIGN KEY constraint failed/i.test(message)) {
      fail(
        "the load was refused: a row names a row the backup does not hold (a write between two tables' reads). Nothing was loaded. " +
          "Use D1 Time Travel for that day, or another backup (docs/operations.md, Restoring).",
      );
    }
    fail(`the load failed (nothing was committed): ${message}`);
  }
  texts.clear();

  // 4. Every table's count, and every full-text index's.
  const counts = (await target.all(countQuery(manifest)))[0];
  await target.close();
  const wrong = countMismatches(manifest, counts);
  if (wrong.length > 0) fail(`row counts differ from the manifest: ${JSON.stringify(wrong)}`);
  console.log(
    `Restored backup ${manifest.id}: ${manifest.tables.length} tables and ${rows} rows, every count as in the manifest (${seconds()} s).`,
  );
  console.log(
    values.to === "local"
      ? "Next: `npm run db:migrate:local` applies the migrations newer than the backup."
      : "Next: point the Worker at it (docs/operations.md, Restoring); `npm run deploy` applies the migrations newer than the backup.",
  );
} finally {
  if (!values.keep) rmSync(work, { recursive: true, force: true });
}

/**
 * The target database: `{ all(sql), load(plan), close() }`. Locally the state folder's database
 * through Miniflare (one D1 batch); remotely through `wrangler d1 execute --remote` (the load as
 * one file, which wrangler imports), where `--database` may name any database of the account (a
 * new one made for the restore, say), reached through a configuration that names its id.
 */
async function openTarget() {
  if (values.to === "local") {
    const local = await openLocalState(values["persist-to"] ?? path.join(ROOT, ".wrangler", "state"), { binding: values.database ?? "DB" });
    return { all: local.all, load: (plan) => local.batch(restoreStatements(plan)), close: local.dispose };
  }
  const config = await wranglerConfig();
  const configured = config.d1_databases.find((d) => d.binding === "DB");
  const name = values.database ?? configured?.database_name;
  if (!name) fail("no database: pass --database NAME");
  const file = await remoteD1Config({
    ...config,
    d1_databases: [{ binding: "DB", database_name: name, migrations_dir: configured?.migrations_dir }],
  });
  const execute = ["d1", "execute", "DB", "--remote", "--config", file];
  return {
    all: async (sql) => jsonOutput(await wrangler([...execute, "--json", "--command", sql]))[0].results,
    load: async (plan) => {
      const script = path.join(work, "restore.sql");
      writeFileSync(script, restoreSql(plan));
      console.log(`(${(statSync(script).size / 1e6).toFixed(1)} MB of SQL, imported by wrangler)`);
      const loaded = await runWrangler([...execute, "--file", script, "--yes"]);
      if (loaded.code !== 0) throw new Error(`${loaded.stdout}\n${loaded.stderr}`.trim());
    },
    close: async () => rmSync(path.dirname(file), { recursive: true, force: true }),
  };
}

/**
 * Reads the files of backup `id` from the bucket: a local one through Miniflare over the state
 * directory (what `npm start` wrote), a remote one with `wrangler r2 object get`, one at a time.
 * Returns `{ read(file), close() }`.
 */
async function bucketReader(id) {
  const bucket = (await wranglerConfig()).r2_buckets.find((b) => b.binding === "UPLOADS")?.bucket_name;
  if (!bucket) fail("wrangler.jsonc names no bucket for UPLOADS");
  const key = (file) => `backups/${id}/${file}`;
  if (from === "local") {
    const persist = path.resolve(values["from-persist-to"] ?? values["persist-to"] ?? path.join(ROOT, ".wrangler", "state"));
    const local = await openLocalState(persist, { bucket });
    return {
      read: async (file) => {
        const object = await local.object(key(file));
        if (object === null) {
          await local.dispose();
          fail(`${key(file)} is not in the local bucket ${bucket} (${persist})`);
        }
        return object;
      },
      close: local.dispose,
    };
  }
  return {
    read: async (file) => {
      const out = path.join(work, `download-${file}`);
      await wrangler([
        "r2",
        "object",
        "get",
        `${bucket}/${key(file)}`,
        "--file",
        out,
        "--remote",
        ...(values.env ? ["--env", values.env] : []),
      ]);
      return readFileSync(out);
    },
    close: async () => {},
  };
}
