// The seeded datasets of `npm run bench:scale` (bench/README.md, "Scale"): one local D1 database per
// size, seeded once with the demo generator and kept in a data directory, and a working copy of it
// per run, with the migrations the stored copy lacks applied to the copy only.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { Miniflare } from "miniflare";
import { readWranglerConfig } from "./targets.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
/** The demo generator seeds at most this many products per call; bigger sizes are seeded in parts with seeds 1, 2, ... */
const PART = 30_000;
const MARKER = "seeded.json";
/** The parts of an unfinished seed (see `ensureSeeded`). */
const PROGRESS = "seeding.json";
/**
 * The database id wrangler.jsonc named until 2026-11-28 (a placeholder, since removed): datasets
 * seeded before then hold their database under it, not under the binding's name.
 */
const LEGACY_D1_ID = "00000000-0000-4000-8000-000000000000";

/** The id wrangler gives the local D1 database of binding DB: its `database_id`, or without one the binding's name. */
export function localD1Id(config) {
  const db = config.d1_databases[0];
  return db.database_id ?? db.binding;
}

const fileNames = new Map();
/** The name of the SQLite file Miniflare keeps the D1 database `id` in (found by opening it once in an empty directory). */
async function sqliteNameFor(id) {
  if (!fileNames.has(id)) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "relab-d1-name-"));
    const mf = new Miniflare({
      modules: true,
      script: "export default { fetch() { return new Response(null) } }",
      d1Databases: { DB: id },
      d1Persist: dir,
    });
    try {
      await (await mf.getD1Database("DB")).prepare("SELECT 1").first();
      const names = readdirSync(path.join(dir, "miniflare-D1DatabaseObject"));
      fileNames.set(
        id,
        names.find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite"),
      );
    } finally {
      await mf.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return fileNames.get(id);
}

/**
 * The D1 database id a stored dataset's database is kept under: what its `seeded.json` says, else
 * (datasets seeded before it said) the current id or the former placeholder, whichever file is there.
 */
export async function datasetD1Id(storedDir, info, config) {
  if (info?.d1DatabaseId) return info.d1DatabaseId;
  const file = sqliteFileOf(storedDir);
  for (const id of [localD1Id(config), LEGACY_D1_ID]) if (file && path.basename(file) === (await sqliteNameFor(id))) return id;
  return localD1Id(config);
}

/** The SQLite file of the D1 database `DB` under a `--persist-to` directory (wrangler's and Miniflare's layout). */
export function sqliteFileOf(persistTo) {
  const dir = path.join(persistTo, "v3/d1/miniflare-D1DatabaseObject");
  if (!existsSync(dir)) return null;
  const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
  return file ? path.join(dir, file) : null;
}

function generatorDigest() {
  const hash = createHash("sha256");
  for (const file of ["scripts/seed/demo-data.mjs", "scripts/seed/starter-data.mjs"]) hash.update(readFileSync(path.join(ROOT, file)));
  return hash.digest("hex").slice(0, 16);
}

function run(command, args, label) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, CI: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = [];
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => out.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const text = Buffer.concat(out).toString();
      if (code === 0) resolve(text);
      else reject(new Error(`${label} exited with ${code}:\n${text.slice(-2000)}`));
    });
  });
}

const README = `# Seeded datasets of \`npm run bench:scale\`

Each directory \`demo-<N>\` is a \`--persist-to\` state directory (wrangler's layout) holding one local D1
database: the migrations of the time (listed in its \`seeded.json\`), the starter reference data and N
base products of the demo generator (\`npm run seed:demo -- --products N --persist-to <dir>\`, in parts
of at most ${PART.toLocaleString("en")} products with seeds 1, 2, ...), about 15 records each. Nothing
else is written here: every bench run works on a copy, and applies the migrations the copy lacks to
the copy only. A seed stopped between parts goes on from the next part on the next run
(\`seeding.json\` lists the parts that landed). Delete a directory to have the next run seed it
again; \`seeded.json\` says what it holds, how long the seed took and how big it was. Serve one by
hand with \`npm start -- --persist-to <dir>\` (after a copy, if it is to stay as it is) when its
\`seeded.json\` names \`"d1DatabaseId": "DB"\`: a dataset seeded while wrangler.jsonc still named a
placeholder database id (before 2026-11-28, no \`d1DatabaseId\`) keeps its database under that id,
which \`npm start\` no longer opens; the bench finds either.
`;

/**
 * The stored database of `products` demo products under `dataDir` (seeded now if it is missing),
 * and what its `seeded.json` says. A seed of several parts records each part in `seeding.json`
 * as it lands; a run stopped between parts (or during one: a part is one D1 batch, all or
 * nothing) goes on from the next part when the same size is asked for again.
 */
export async function ensureSeeded(dataDir, products, log = console.log) {
  const dir = path.join(dataDir, `demo-${products}`);
  const marker = path.join(dir, MARKER);
  const progressFile = path.join(dir, PROGRESS);
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(path.join(dataDir, "README.md"))) writeFileSync(path.join(dataDir, "README.md"), README);
  if (existsSync(marker)) {
    const info = JSON.parse(readFileSync(marker, "utf8"));
    if (info.generator !== generatorDigest()) {
      log(`  note: ${dir} was seeded by another version of the demo generator (${info.generator}); delete it to seed again`);
    }
    return { dir, info };
  }
  const started = performance.now();
  let progress = existsSync(progressFile) ? JSON.parse(readFileSync(progressFile, "utf8")) : null;
  if (progress && (progress.products !== products || progress.generator !== generatorDigest())) {
    log(`  ${dir}: an unfinished seed of another size or generator; seeding again`);
    progress = null;
  }
  if (progress) {
    const done = progress.parts.reduce((sum, part) => sum + part.products, 0);
    const found = await countBaseProducts(dir, progress.d1DatabaseId);
    if (found !== done) {
      throw new Error(
        `${dir}: ${PROGRESS} lists ${done} base products seeded, the database holds ${found}; delete the directory to seed again`,
      );
    }
    log(`  resuming the seed of ${dir}: ${done.toLocaleString("en")} of ${products.toLocaleString("en")} base products are there`);
  } else {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    log(`  seeding ${products.toLocaleString("en")} demo products into ${dir} (once; kept for later runs)`);
    const migrations = await seedMigrations();
    await applyAtSeed(dir, migrations);
    progress = {
      products,
      generator: generatorDigest(),
      migrations: migrations.map((m) => m.name),
      // What wrangler (seed-demo's `wrangler d1 execute --local`) named the database: its file is named after it.
      d1DatabaseId: localD1Id(readWranglerConfig(ROOT)),
      startedAt: new Date().toISOString(),
      parts: [],
    };
    writeFileSync(progressFile, `${JSON.stringify(progress, null, 2)}\n`);
  }
  let done = progress.parts.reduce((sum, part) => sum + part.products, 0);
  for (let seed = progress.parts.length + 1; done < products; seed++) {
    const n = Math.min(PART, products - done);
    const partStarted = performance.now();
    const out = await run(
      process.execPath,
      ["scripts/seed-demo.mjs", "--products", String(n), "--seed", String(seed), "--persist-to", dir],
      "seed-demo",
    );
    progress.parts.push({ products: n, seed, seconds: Number(((performance.now() - partStarted) / 1000).toFixed(1)) });
    writeFileSync(progressFile, `${JSON.stringify(progress, null, 2)}\n`);
    done += n;
    log(`    ${done.toLocaleString("en")} / ${products.toLocaleString("en")}: ${out.trim().split("\n").at(-1)}`);
  }
  const file = sqliteFileOf(dir);
  const { startedAt, parts, ...rest } = progress;
  const info = {
    ...rest,
    parts,
    seededAt: new Date().toISOString(),
    startedAt,
    // The parts' own times (this run's and any earlier run's), without the migrations.
    seconds: Number(parts.reduce((sum, part) => sum + part.seconds, 0).toFixed(1)),
    lastRunSeconds: Number(((performance.now() - started) / 1000).toFixed(1)),
    sqliteBytes: file ? statSync(file).size : null,
    // What wrangler left in the write-ahead log, not yet in the file (it is read as part of the database).
    walBytes: file && existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0,
  };
  writeFileSync(marker, `${JSON.stringify(info, null, 2)}\n`);
  rmSync(progressFile, { force: true });
  return { dir, info };
}

/** The base products in the D1 database `id` under the state directory `dir`. */
async function countBaseProducts(dir, id) {
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response(null) } }",
    d1Databases: { DB: id },
    d1Persist: path.join(dir, "v3/d1"),
  });
  try {
    const row = await (await mf.getD1Database("DB")).prepare("SELECT count(*) AS n FROM products WHERE parent_id IS NULL").first();
    return row.n;
  } finally {
    await mf.dispose();
  }
}

/**
 * The migrations a stored dataset is seeded with: those on the `main` branch (git), so that the
 * dataset holds the shared schema and a branch's own new migrations are applied to each working
 * copy instead (they may still change); every migration of the tree when there is no `main`.
 */
async function seedMigrations() {
  const all = await readD1Migrations(path.join(ROOT, "migrations"));
  const listed = await run("git", ["ls-tree", "--name-only", "main", "migrations/"], "git ls-tree").catch(() => "");
  const onMain = new Set(listed.split("\n").map((line) => path.basename(line.trim())));
  const chosen = all.filter((m) => onMain.has(m.name));
  return chosen.length > 0 ? chosen : all;
}

/** Applies `migrations` to the D1 database under `dir` (wrangler's layout), recording them in `d1_migrations` as wrangler does. */
async function applyAtSeed(dir, migrations) {
  const config = readWranglerConfig(ROOT);
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response(null) } }",
    compatibilityDate: config.compatibility_date,
    d1Databases: { DB: localD1Id(config) },
    d1Persist: path.join(dir, "v3/d1"),
  });
  try {
    const db = await mf.getD1Database("DB");
    await db.exec(
      "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);",
    );
    for (const migration of migrations) {
      const statements = migration.queries.map((query) => db.prepare(query));
      statements.push(db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(migration.name));
      await db.batch(statements);
    }
  } finally {
    await mf.dispose();
  }
}

/** A copy of the stored database to run against (removed by `remove`). */
export function workingCopy(storedDir, base = os.tmpdir()) {
  const dir = mkdtempSync(path.join(base, "relab-scale-"));
  cpSync(path.join(storedDir, "v3"), path.join(dir, "v3"), { recursive: true });
  return { dir, d1Persist: path.join(dir, "v3/d1"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Applies to `db` (the working copy, through Miniflare) the migrations its `d1_migrations` table
 * does not list, in order, one batch each, and records them there as wrangler does.
 */
export async function applyPendingMigrations(db) {
  // By name after the number: a migration renumbered when its branch was merged is the same migration.
  const unnumbered = (name) => name.replace(/^\d+_/, "");
  const applied = new Set((await db.prepare("SELECT name FROM d1_migrations").all()).results.map((row) => unnumbered(row.name)));
  const done = [];
  for (const migration of await readD1Migrations(path.join(ROOT, "migrations"))) {
    if (applied.has(unnumbered(migration.name))) continue;
    const started = performance.now();
    const statements = migration.queries.map((query) => db.prepare(query));
    statements.push(db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(migration.name));
    await db.batch(statements);
    done.push({ name: migration.name, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) });
  }
  return done;
}
