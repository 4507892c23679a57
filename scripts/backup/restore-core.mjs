// The reading side of a database backup (src/services/operations/backup.ts writes it; docs/operations.md,
// Backups): the manifest, each file checked against its size and SHA-256, the gzip members read,
// and the SQL that loads it all into an empty D1 database. Web APIs only (crypto.subtle,
// DecompressionStream), so that `npm run restore` (Node) and the restore drill test (workerd)
// share it.

/** The manifest's `format` this reader knows. */
export const BACKUP_FORMAT = "relab-d1-backup/1";

/** Parses and checks a manifest's text; throws with what is wrong. */
export function parseManifest(text) {
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new Error("manifest.json is not JSON");
  }
  if (manifest?.format !== BACKUP_FORMAT)
    throw new Error(`manifest.json is of format ${JSON.stringify(manifest?.format)}, not ${BACKUP_FORMAT}`);
  if (
    !Array.isArray(manifest.schema) ||
    !Array.isArray(manifest.tables) ||
    !Array.isArray(manifest.shadow) ||
    !Array.isArray(manifest.rebuild)
  ) {
    throw new Error("manifest.json lacks its schema, tables, shadow or rebuild lists");
  }
  for (const table of manifest.tables) {
    const fine =
      typeof table.name === "string" &&
      typeof table.file === "string" &&
      !table.file.includes("/") &&
      Number.isSafeInteger(table.rows) &&
      Number.isSafeInteger(table.bytes) &&
      /^[0-9a-f]{64}$/.test(table.sha256) &&
      Array.isArray(table.members);
    if (!fine) throw new Error(`manifest.json: the entry of table ${JSON.stringify(table?.name)} is malformed`);
  }
  return manifest;
}

async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Throws unless `bytes` are the file the manifest's `table` entry names (size and SHA-256). */
export async function verifyFile(table, bytes) {
  if (bytes.length !== table.bytes) throw new Error(`${table.file}: ${bytes.length} bytes, the manifest says ${table.bytes}`);
  const sha256 = await sha256Hex(bytes);
  if (sha256 !== table.sha256) throw new Error(`${table.file}: SHA-256 ${sha256}, the manifest says ${table.sha256}`);
}

/**
 * A table file's SQL text. The file is a series of gzip members (one per checkpoint of the
 * backup); the web's DecompressionStream reads one member only, so each is read on its own by
 * the lengths the manifest records. (`gunzip` and Node's zlib read the whole file at once.)
 */
export async function tableText(table, bytes) {
  const total = table.members.reduce((sum, n) => sum + n, 0);
  if (total !== bytes.length) throw new Error(`${table.file}: its gzip members add up to ${total} bytes, not ${bytes.length}`);
  let text = "";
  let offset = 0;
  for (const length of table.members) {
    const member = bytes.subarray(offset, offset + length);
    offset += length;
    text += await new Response(new Blob([member]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  }
  return text;
}

const quoteIdentifier = (name) => `"${name.replaceAll('"', '""')}"`;

/**
 * The SQL that loads a backup into an empty database, in order: the tables as they were created
 * (a full-text index's shadow tables come with its virtual table), every row (foreign keys
 * checked once at the end, so the order of rows does not matter), the AUTOINCREMENT counters,
 * the full-text indexes rebuilt from their content, then indexes, triggers and views, so that no
 * trigger fires on the rows being loaded (the read caches' generations come back exactly as they
 * were). When something the
 * read caches show changed while the backup ran, they get fresh generations instead: no cached
 * copy can then be taken for current. `texts` maps each table's name to its file's SQL.
 * Returns `{ head, tables: [{ name, text }], tail }`; `restoreSql` joins them into one script.
 */
export function restorePlan(manifest, texts) {
  const head = ["PRAGMA defer_foreign_keys = true;"];
  const shadow = new Set(manifest.shadow);
  for (const entry of manifest.schema) {
    if (entry.type === "table" && entry.sql && entry.name !== "sqlite_sequence" && !shadow.has(entry.name)) head.push(`${entry.sql};`);
  }
  const tables = [];
  let sequence = null;
  for (const table of manifest.tables) {
    const text = texts.get(table.name);
    if (text === undefined) throw new Error(`no data for table ${table.name}`);
    if (table.name === "sqlite_sequence") sequence = text;
    else tables.push({ name: table.name, text });
  }
  const tail = [];
  if (sequence !== null) {
    tail.push("DELETE FROM sqlite_sequence;");
    tables.push({ name: "sqlite_sequence", text: sequence });
  }
  for (const name of manifest.rebuild) tail.push(`INSERT INTO ${quoteIdentifier(name)}(${quoteIdentifier(name)}) VALUES('rebuild');`);
  for (const entry of manifest.schema) {
    if (entry.type !== "table" && entry.sql) tail.push(`${entry.sql};`);
  }
  if (manifest.read_generations?.changed) {
    const names = new Set(manifest.tables.map((t) => t.name));
    for (const name of ["read_generations", "tree_generations"]) {
      if (names.has(name)) tail.push(`UPDATE ${quoteIdentifier(name)} SET generation = random();`);
    }
  }
  return { head, tables, tail, sequenceReset: sequence !== null };
}

/** The restore as one SQL script (for `wrangler d1 execute --file`, whose own splitter knows trigger bodies). */
export function restoreSql(plan) {
  const parts = [...planParts(plan)].map((part) => part.text);
  return `${parts.filter((text) => text !== "").join("\n")}\n`;
}

/** The script's parts in order: schema statements (`kind: "statement"`) and table texts (`kind: "rows"`). */
function* planParts(plan) {
  for (const text of plan.head) yield { kind: "statement", text };
  const tail = [...plan.tail];
  for (const table of plan.tables) {
    if (table.name === "sqlite_sequence") yield { kind: "statement", text: tail.shift() };
    yield { kind: "rows", text: table.text };
  }
  for (const text of tail) yield { kind: "statement", text };
}

/**
 * Splits SQL text into statements at each `;` outside a quoted string or identifier. Values come
 * from SQLite's `quote()`, so a `;` or a line break inside a text value is inside quotes: user
 * text never ends a statement early.
 */
export function splitStatements(text) {
  const statements = [];
  let start = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 39 /* ' */ || c === 34 /* " */ || c === 96 /* ` */) {
      const close = text.indexOf(text[i], i + 1);
      if (close === -1) throw new Error("unterminated quoted value in the backup's SQL");
      // A doubled quote is an escaped one: the scan goes on from after it, still inside.
      i = close + 1;
      continue;
    }
    if (c === 59 /* ; */) {
      const statement = text.slice(start, i).trim();
      if (statement) statements.push(statement);
      start = i + 1;
    }
    i++;
  }
  const rest = text.slice(start).trim();
  if (rest) throw new Error("the backup's SQL ends inside a statement");
  return statements;
}

/**
 * The restore as separate statements, in order (for a D1 batch): the schema statements whole (a
 * trigger's body holds semicolons), the table texts split.
 */
export function restoreStatements(plan) {
  const statements = [];
  for (const part of planParts(plan)) {
    if (part.kind === "rows") statements.push(...splitStatements(part.text));
    else statements.push(part.text.replace(/;$/, ""));
  }
  return statements;
}

/** One query counting every table of the manifest: one row, a column per table. */
export function countQuery(manifest) {
  return `SELECT ${manifest.tables.map((t) => `(SELECT count(*) FROM ${quoteIdentifier(t.name)}) AS ${quoteIdentifier(t.name)}`).join(", ")}`;
}

/** The tables whose count differs from the manifest's: `[{ name, expected, found }]`. */
export function countMismatches(manifest, counts) {
  return manifest.tables
    .filter((t) => Number(counts[t.name]) !== t.rows)
    .map((t) => ({ name: t.name, expected: t.rows, found: counts[t.name] ?? null }));
}

/** A query listing the tables of a database that a restore would collide with (empty: the database is empty). */
export const EXISTING_TABLES_QUERY =
  "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name <> 'sqlite_sequence' ORDER BY name";
