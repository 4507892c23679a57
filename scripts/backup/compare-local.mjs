// Compares two local D1 databases table by table (the restore drill, docs/operations.md): every
// table but D1's own, row by row as exact SQL literals in rowid order, the schema, and what the
// full-text index finds. Shadow tables of full-text indexes are compared by what the index
// answers, not byte by byte (a rebuild lays them out anew).
//
//   node scripts/backup/compare-local.mjs <state dir A> <state dir B> [--skip backup_runs]
//
// Each state dir is a wrangler --persist-to folder (the one `npm start` uses is .wrangler/state).
import path from "node:path";
import { parseArgs } from "node:util";
import { Miniflare } from "miniflare";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { skip: { type: "string", multiple: true, default: ["backup_runs"] } },
});
if (positionals.length !== 2) {
  console.error("usage: node scripts/backup/compare-local.mjs <state dir A> <state dir B> [--skip TABLE ...]");
  process.exit(2);
}

const SCRIPT = "export default { fetch() { return new Response(null, { status: 404 }) } }";
// Wrangler names a local database without a database_id by its binding (DB).
const open = async (dir) => {
  const mf = new Miniflare({
    modules: true,
    script: SCRIPT,
    d1Databases: { DB: "DB" },
    d1Persist: path.join(path.resolve(dir), "v3", "d1"),
  });
  return { mf, db: await mf.getD1Database("DB") };
};

const TABLES = `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
  AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND (name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR name = 'sqlite_sequence') ORDER BY name`;

/** A digest of a table's rows (exact literals, rowid order) and their count, read in pages. */
async function digestTable(db, name) {
  const columns = (await db.prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid").bind(name).all()).results.map((c) => c.name);
  const values = columns.map((c) => `quote("${c.replaceAll('"', '""')}")`).join(" || ',' || ");
  const hash = (await import("node:crypto")).createHash("sha256");
  let cursor = Number.MIN_SAFE_INTEGER;
  let rows = 0;
  for (;;) {
    const page = await db
      .prepare(`SELECT rowid AS r, quote(rowid) || ':' || ${values || "''"} AS v FROM "${name}" WHERE rowid > ? ORDER BY rowid LIMIT 5000`)
      .bind(cursor)
      .all();
    for (const row of page.results) hash.update(`${row.v}\n`);
    rows += page.results.length;
    if (page.results.length < 5000) break;
    cursor = page.results.at(-1).r;
  }
  return { rows, sha256: hash.digest("hex") };
}

async function describe(db) {
  const out = {};
  for (const { name } of (await db.prepare(TABLES).all()).results) {
    if (!values.skip.includes(name)) out[name] = await digestTable(db, name);
  }
  const schema = (
    await db
      .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name")
      .all()
  ).results;
  let search = null;
  if (schema.some((entry) => entry.name === "products_fts")) {
    await db.prepare("INSERT INTO products_fts(products_fts) VALUES('integrity-check')").run();
    search = {};
    for (const term of ["a*", "e*", "screw*", "cable OR housing"]) {
      search[term] = (await db.prepare("SELECT count(*) AS n FROM products_fts WHERE products_fts MATCH ?").bind(term).first()).n;
    }
  }
  return { tables: out, schema: JSON.stringify(schema), search };
}

const [a, b] = await Promise.all(positionals.map(open));
try {
  const [left, right] = [await describe(a.db), await describe(b.db)];
  const problems = [];
  for (const name of new Set([...Object.keys(left.tables), ...Object.keys(right.tables)])) {
    const l = left.tables[name];
    const r = right.tables[name];
    if (!l || !r || l.sha256 !== r.sha256) problems.push(`${name}: ${JSON.stringify(l)} vs ${JSON.stringify(r)}`);
  }
  if (left.schema !== right.schema) problems.push("the schemas differ");
  if (JSON.stringify(left.search) !== JSON.stringify(right.search))
    problems.push(`full-text search differs: ${JSON.stringify(left.search)} vs ${JSON.stringify(right.search)}`);
  const rows = Object.values(left.tables).reduce((sum, t) => sum + t.rows, 0);
  if (problems.length > 0) {
    console.error(`DIFFERENT:\n  ${problems.join("\n  ")}`);
    process.exitCode = 1;
  } else {
    console.log(
      `Identical: ${Object.keys(left.tables).length} tables, ${rows} rows, the schema and full-text search (${JSON.stringify(left.search)}); skipped ${values.skip.join(", ")}.`,
    );
  }
} finally {
  await Promise.all([a.mf.dispose(), b.mf.dispose()]);
}
