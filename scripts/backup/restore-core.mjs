// The reading side of a database backup (src/services/operations/backup.ts writes it; docs/operations.md,
// Backups): the manifest, each file checked against its size and SHA-256, the gzip members read,
// and the SQL that loads it all into an empty D1 database. Web APIs only (crypto.subtle,
// DecompressionStream), so that `npm run restore` (Node) and the restore drill test (workerd)
// share it.

/** The manifest's `format` backups are written in. */
export const BACKUP_FORMAT = "relab-d1-backup/2";
/**
 * The format before it: its full-text indexes hold no file; the restore rebuilds each (`rebuild`)
 * from every row of its content, which is right only for an index over all of them.
 */
export const BACKUP_FORMAT_1 = "relab-d1-backup/1";

const isName = (value) => typeof value === "string" && value !== "";

/** Whether `entry` describes a file as the backup writes it: its name, size, SHA-256 and gzip members. */
const isFileEntry = (entry) =>
  isName(entry?.name) &&
  typeof entry.file === "string" &&
  /^[^/]+\.sql\.gz$/.test(entry.file) &&
  Number.isSafeInteger(entry.rows) &&
  Number.isSafeInteger(entry.bytes) &&
  /^[0-9a-f]{64}$/.test(entry.sha256) &&
  Array.isArray(entry.members) &&
  entry.members.every((n) => Number.isSafeInteger(n) && n > 0);

/**
 * Parses and checks a manifest's text; throws with what is wrong. A manifest of the format before
 * (BACKUP_FORMAT_1) comes back with `indexes: []`, one of this format with `rebuild: []`.
 */
export function parseManifest(text) {
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch {
    throw new Error("manifest.json is not JSON");
  }
  const format = manifest?.format;
  if (format !== BACKUP_FORMAT && format !== BACKUP_FORMAT_1)
    throw new Error(`manifest.json is of format ${JSON.stringify(format)}, neither ${BACKUP_FORMAT} nor ${BACKUP_FORMAT_1}`);
  const lists = format === BACKUP_FORMAT ? ["schema", "tables", "shadow", "indexes"] : ["schema", "tables", "shadow", "rebuild"];
  const missing = lists.filter((list) => !Array.isArray(manifest[list]));
  if (missing.length > 0) throw new Error(`manifest.json lacks its ${missing.join(", ")} list${missing.length > 1 ? "s" : ""}`);
  for (const table of manifest.tables) {
    if (!isFileEntry(table)) throw new Error(`manifest.json: the entry of table ${JSON.stringify(table?.name)} is malformed`);
  }
  if (format === BACKUP_FORMAT_1) return { ...manifest, indexes: [] };
  const virtual = new Set(
    manifest.schema.filter((entry) => entry?.type === "table" && /^CREATE\s+VIRTUAL\s+TABLE\s/i.test(entry.sql ?? "")).map((e) => e.name),
  );
  const names = new Set(manifest.tables.map((table) => table.name));
  const shadow = new Set(manifest.shadow);
  for (const index of manifest.indexes) {
    const fine =
      isFileEntry(index) &&
      virtual.has(index.name) &&
      !names.has(index.name) &&
      Array.isArray(index.columns) &&
      index.columns.length > 0 &&
      index.columns.every(isName) &&
      isName(index.content) &&
      isName(index.content_rowid) &&
      shadow.has(index.source);
    if (!fine) throw new Error(`manifest.json: the entry of full-text index ${JSON.stringify(index?.name)} is malformed`);
    names.add(index.name);
  }
  return { ...manifest, rebuild: [] };
}

/** Every file of a backup, the tables' then the full-text indexes': `{ name, file, rows, bytes, sha256, members }`. */
export function backupFiles(manifest) {
  return [...manifest.tables, ...manifest.indexes];
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
 * What every statement of a full-text index's file starts with, made from its manifest entry
 * (src/services/operations/backup-plan.ts writes the same): rows of the content, by the rowids
 * that follow, indexed again.
 */
export function fillPrefix(index) {
  const columns = index.columns.map(quoteIdentifier).join(",");
  const key = quoteIdentifier(index.content_rowid);
  return `INSERT INTO ${quoteIdentifier(index.name)}(rowid,${columns}) SELECT ${key},${columns} FROM ${quoteIdentifier(index.content)} WHERE ${key} IN (`;
}

/** Throws unless every statement of an index's file is its fill (fillPrefix, then rowids): the restore runs nothing else from it. */
function checkFill(index, text) {
  const prefix = fillPrefix(index);
  splitStatements(text).forEach((statement, i) => {
    if (!statement.startsWith(prefix) || !/^-?\d+(,-?\d+)*\)$/.test(statement.slice(prefix.length)))
      throw new Error(
        `${index.file}: statement ${i + 1} is not the one that indexes rows of ${index.content} in ${index.name} as the manifest says`,
      );
  });
}

/**
 * The SQL that loads a backup into an empty database, in order: the tables as they were created
 * (a full-text index's shadow tables come with its virtual table), every row (foreign keys
 * checked once at the end, so the order of rows does not matter), the AUTOINCREMENT counters,
 * then indexes, triggers and views, so that no trigger fires on the rows being loaded (the read
 * caches' generations come back exactly as they were). When something the read caches show
 * changed while the backup ran, they get fresh generations instead: no cached copy can then be
 * taken for current. Last, each full-text index gets the rows of its content it held, by its
 * file's statements (checked to be exactly that; no trigger can be on a virtual table, and a view
 * it indexes exists by then). A backup of the format before rebuilds each index from all of its
 * content instead, after the counters.
 * `texts` maps each table's and index's name to its file's SQL.
 * Returns `{ head, tables: [{ name, text }], tail, fills: [{ name, text }] }`; `restoreSql` joins them into one script.
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
  const fills = manifest.indexes.map((index) => {
    const text = texts.get(index.name);
    if (text === undefined) throw new Error(`no data for full-text index ${index.name}`);
    checkFill(index, text);
    return { name: index.name, text };
  });
  return { head, tables, tail, fills, sequenceReset: sequence !== null };
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
  for (const fill of plan.fills) yield { kind: "rows", text: fill.text };
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

/**
 * One query counting the rows of every table of the manifest, and the documents of every
 * full-text index (the rows of the shadow table the backup read them from): one row, a column each.
 */
export function countQuery(manifest) {
  const counts = [...manifest.tables.map((t) => [t.name, t.name]), ...manifest.indexes.map((index) => [index.name, index.source])].map(
    ([name, table]) => `(SELECT count(*) FROM ${quoteIdentifier(table)}) AS ${quoteIdentifier(name)}`,
  );
  return `SELECT ${counts.join(", ")}`;
}

/** The tables and indexes whose count differs from the manifest's: `[{ name, expected, found }]`. */
export function countMismatches(manifest, counts) {
  return backupFiles(manifest)
    .filter((t) => Number(counts[t.name]) !== t.rows)
    .map((t) => ({ name: t.name, expected: t.rows, found: counts[t.name] ?? null }));
}

/** A query listing the tables of a database that a restore would collide with (empty: the database is empty). */
export const EXISTING_TABLES_QUERY =
  "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name <> 'sqlite_sequence' ORDER BY name";
