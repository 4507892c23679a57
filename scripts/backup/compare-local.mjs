// Compares two local D1 databases table by table (the restore drill, docs/operations.md): every
// table but D1's own, row by row as exact SQL literals in rowid order, the schema, the documents
// each full-text index holds (its `_docsize` shadow table, row by row) and what products_fts finds.
// The rest of an index's shadow tables is not compared byte by byte (a restore lays it out anew).
//
//   node scripts/backup/compare-local.mjs <state dir A> <state dir B> [--skip backup_runs]
//
// Each state dir is a wrangler --persist-to folder (the one `npm start` uses is .wrangler/state).
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { openLocalState } from "../lib/local-d1.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { skip: { type: "string", multiple: true, default: ["backup_runs"] } },
});
if (positionals.length !== 2) {
  console.error("usage: node scripts/backup/compare-local.mjs <state dir A> <state dir B> [--skip TABLE ...]");
  process.exit(2);
}

const TABLES = `SELECT name FROM pragma_table_list WHERE schema = 'main' AND (type = 'table'
  AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND (name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR name = 'sqlite_sequence')
  OR type = 'shadow' AND name LIKE '%\\_docsize' ESCAPE '\\') ORDER BY name`;

/** A digest of a table's rows (exact literals, rowid order) and their count, read in pages. */
const literal = (text) => `'${text.replaceAll("'", "''")}'`;

async function digestTable(db, name) {
  const columns = (await db.all(`SELECT name FROM pragma_table_info(${literal(name)}) ORDER BY cid`)).map((c) => c.name);
  const values = columns.map((c) => `quote("${c.replaceAll('"', '""')}")`).join(" || ',' || ");
  const hash = createHash("sha256");
  let cursor = Number.MIN_SAFE_INTEGER;
  let rows = 0;
  for (;;) {
    const page = await db.all(
      `SELECT rowid AS r, quote(rowid) || ':' || ${values || "''"} AS v FROM "${name.replaceAll('"', '""')}" WHERE rowid > ${cursor} ORDER BY rowid LIMIT 5000`,
    );
    for (const row of page) hash.update(`${row.v}\n`);
    rows += page.length;
    if (page.length < 5000) break;
    cursor = page.at(-1).r;
  }
  return { rows, sha256: hash.digest("hex") };
}

async function describe(db) {
  const out = {};
  for (const { name } of await db.all(TABLES)) {
    if (!values.skip.includes(name)) out[name] = await digestTable(db, name);
  }
  const schema = await db.all(
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name",
  );
  let search = null;
  if (schema.some((entry) => entry.name === "products_fts")) {
    await db.all("INSERT INTO products_fts(products_fts) VALUES('integrity-check')");
    search = {};
    for (const term of ["a*", "e*", "screw*", "cable OR housing"]) {
      search[term] = (await db.all(`SELECT count(*) AS n FROM products_fts WHERE products_fts MATCH ${literal(term)}`))[0].n;
    }
  }
  return { tables: out, schema: JSON.stringify(schema), search };
}

const [a, b] = await Promise.all(positionals.map((dir) => openLocalState(dir)));
try {
  const [left, right] = [await describe(a), await describe(b)];
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
      `Identical: ${Object.keys(left.tables).length} tables (the full-text indexes' _docsize among them), ${rows} rows, the schema and full-text search (${JSON.stringify(left.search)}); skipped ${values.skip.join(", ")}.`,
    );
  }
} finally {
  await Promise.all([a.dispose(), b.dispose()]);
}
