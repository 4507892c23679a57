import type { Db } from "../../db/client";
import { DeclarationError, fts5Declaration, unquote, virtualTableDeclaration } from "../../lib/backup/fts5-declaration";

/**
 * What a backup copies and how (docs/operations.md, Backups): the schema as `sqlite_master` holds
 * it, and every table but D1's own (`_cf_*`), SQLite's internal ones (`sqlite_sequence` aside,
 * whose counters AUTOINCREMENT needs) and `backup_runs`, each read in rowid order as SQL
 * `INSERT`s whose values SQLite's `quote()` wrote (exact for every type: 64-bit integers, reals
 * that must round-trip, blobs as X'..'), so that a restore makes the same rows bit for bit.
 *
 * A full-text index over another table's content (FTS5 with `content=`, such as `products_fts`)
 * holds tokens of some of that table's rows: all of them, or only those its triggers chose. Its
 * shadow tables are SQLite's internal layout (and D1 lets nobody write them), so the backup
 * writes instead which content rows it holds, read from its `<name>_docsize` shadow table (one
 * row per document, kept unless `columnsize=0`), as statements that index exactly those rows again
 * from the restored content: `INSERT INTO idx(rowid, cols) SELECT key, cols FROM content WHERE
 * key IN (...)`. An index the backup cannot restore that way is refused, never restored wrong.
 */

/** One entry of `sqlite_master`, in creation order. */
export interface SchemaEntry {
  readonly type: "table" | "index" | "trigger" | "view";
  readonly name: string;
  readonly tbl_name: string;
  readonly sql: string | null;
}

export interface PlannedTable {
  readonly name: string;
  readonly columns: readonly string[];
  /** Whether the rowid is written as a column of its own (a table without an INTEGER PRIMARY KEY, whose rowid is that key). */
  readonly rowid: boolean;
  /** The largest rowid when the backup began: rows added later are left out. Null for an empty table. */
  readonly cut: number | null;
}

/** An FTS5 index over external content, and where the backup reads which content rows it holds. */
export interface PlannedIndex {
  readonly name: string;
  /** Its columns, which are the content's columns of the same names (FTS5 reads them so). */
  readonly columns: readonly string[];
  /** The table or view it indexes (`content=`). */
  readonly content: string;
  /** The content's column that gives a document's rowid (`content_rowid=`, by default `rowid`). */
  readonly contentRowid: string;
  /** The shadow table listing the rowids of its documents: `<name>_docsize`. */
  readonly source: string;
  /** The largest rowid in `source` when the backup began. Null for an empty index. */
  readonly cut: number | null;
}

export interface BackupPlan {
  readonly schema: readonly SchemaEntry[];
  /** Referenced tables before the tables that reference them, so that a row read later never names a parent read earlier and deleted since. */
  readonly tables: readonly PlannedTable[];
  /** The read caches' generations when the backup began (exact, as text), to tell whether a write happened while it ran. */
  readonly generations: Readonly<Record<string, string>> | null;
  /** Full-text indexes over another table's content: their files list the rows they hold, written after every table's. */
  readonly indexes: readonly PlannedIndex[];
  /** The shadow tables of those indexes: in `schema`, but created by their virtual table, never copied. */
  readonly shadow: readonly string[];
}

/** Tables no backup holds: the runs of backups themselves. */
export const EXCLUDED_TABLES: ReadonlySet<string> = new Set(["backup_runs"]);

/** A schema problem the backup cannot work around (retrying cannot help). */
export class BackupPlanError extends Error {
  override name = "BackupPlanError";
}

/** `"name"`, with inner quotes doubled. */
export const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`;

function copied(name: string): boolean {
  if (EXCLUDED_TABLES.has(name) || name.startsWith("_cf_")) return false;
  return name === "sqlite_sequence" || !name.startsWith("sqlite_");
}

/** Reads the schema and builds the plan, in five round trips whatever the number of tables. */
export async function makePlan(db: Db): Promise<BackupPlan> {
  const client = db.$client;
  const master = await client
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('table', 'index', 'trigger', 'view') ORDER BY rowid")
    .all<SchemaEntry>();
  const schema = (master.results ?? []).filter((entry) => !entry.name.startsWith("_cf_") && !entry.tbl_name.startsWith("_cf_"));
  const kinds = await client
    .prepare("SELECT name, type FROM pragma_table_list WHERE schema = 'main'")
    .all<{ name: string; type: string }>();
  const kindOf = new Map((kinds.results ?? []).map((row) => [row.name, row.type]));
  const shadow = schema.filter((entry) => kindOf.get(entry.name) === "shadow").map((entry) => entry.name);
  const names = schema
    .filter((entry) => entry.type === "table" && kindOf.get(entry.name) === "table" && copied(entry.name))
    .map((entry) => entry.name);
  // What an index may take its content from: a table the backup copies, or a view (made from them).
  const contents = new Set([...names, ...schema.filter((entry) => entry.type === "view").map((entry) => entry.name)].map(folded));
  const declared = schema
    .filter((entry) => kindOf.get(entry.name) === "virtual" && !isVocabulary(entry, schema))
    .map((entry) => declaredIndex(entry, kindOf, contents));
  // Per table: its columns, whether it has a rowid, its foreign keys; per index: its columns.
  const statements = [
    ...names.flatMap((name) => [
      client.prepare("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid").bind(name),
      client.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?").bind(name),
      client.prepare('SELECT DISTINCT "table" AS parent FROM pragma_foreign_key_list(?)').bind(name),
    ]),
    ...declared.map((index) => client.prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid").bind(index.name)),
  ];
  const described = statements.length ? await client.batch(statements) : [];
  // The largest rowid of each table and of each index's list of documents.
  const cuts = [
    ...names.map((name) => client.prepare(`SELECT max(rowid) AS cut FROM ${quoteIdentifier(name)}`)),
    ...declared.map((index) => client.prepare(`SELECT max(id) AS cut FROM ${quoteIdentifier(index.source)}`)),
  ];
  const maxima = cuts.length ? await client.batch(cuts) : [];
  const cutOf = (i: number, name: string) => {
    const cut = ((maxima[i]!.results ?? []) as { cut: number | null }[])[0]?.cut ?? null;
    if (cut !== null && !Number.isSafeInteger(cut)) throw new BackupPlanError(`The table ${name} has rowids past 2^53.`);
    return cut;
  };
  const tables = new Map<string, PlannedTable & { parents: string[] }>();
  names.forEach((name, i) => {
    const columns = (described[i * 3]!.results ?? []) as { name: string; type: string; pk: number }[];
    const withoutRowid = ((described[i * 3 + 1]!.results ?? []) as { wr: number }[])[0]?.wr === 1;
    if (withoutRowid) throw new BackupPlanError(`The table ${name} is WITHOUT ROWID; the backup pages by rowid.`);
    const parents = ((described[i * 3 + 2]!.results ?? []) as { parent: string }[]).map((row) => row.parent);
    const keys = columns.filter((column) => column.pk > 0);
    const rowidAlias = keys.length === 1 && keys[0]!.type.toUpperCase() === "INTEGER";
    tables.set(name, { name, columns: columns.map((column) => column.name), rowid: !rowidAlias, cut: cutOf(i, name), parents });
  });
  const indexes = declared.map((index, i): PlannedIndex => {
    const columns = ((described[names.length * 3 + i]!.results ?? []) as { name: string }[]).map((column) => column.name);
    if (columns.length === 0) throw new BackupPlanError(`The full-text index ${index.name} reports no columns.`);
    return { ...index, columns, cut: cutOf(names.length + i, index.source) };
  });
  return { schema, tables: parentsFirst(tables), generations: await readGenerations(db, names), indexes, shadow };
}

/** SQLite matches names without regard to ASCII case. */
const folded = (name: string) => name.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * Whether virtual table `entry` is an `fts5vocab` table over an FTS5 index of this schema (such as
 * `products_trigram_lower_terms`, migration 0027): a read-only view of that index's terms, holding no data
 * of its own, which the schema's statement makes again once the index is restored.
 */
function isVocabulary(entry: SchemaEntry, schema: readonly SchemaEntry[]): boolean {
  const declaration = readableDeclaration(entry);
  if (declaration?.module.toLowerCase() !== "fts5vocab") return false;
  // fts5vocab(index, type) or fts5vocab(schema, index, type); the index may be quoted.
  const index = declaration.args.length === 3 ? declaration.args[1] : declaration.args[0];
  if (index === undefined) return false;
  const indexed = schema.find((other) => other.type === "table" && folded(other.name) === folded(unquote(index)));
  return indexed !== undefined && readableDeclaration(indexed)?.module.toLowerCase() === "fts5";
}

/** The declaration of virtual table `entry`, or null when it is none or cannot be read (`declaredIndex` then says why). */
function readableDeclaration(entry: SchemaEntry): ReturnType<typeof virtualTableDeclaration> {
  try {
    return virtualTableDeclaration(entry.sql ?? "");
  } catch (error) {
    if (error instanceof DeclarationError) return null;
    throw error;
  }
}

/**
 * What the declaration of virtual table `entry` says of it, when it is an FTS5 index the backup
 * can restore: one over another table's content (`content=`) that lists the rows it holds in its
 * `<name>_docsize` shadow table. Anything else is refused: a virtual table holding its own data,
 * an FTS5 index holding its own copy of the text or none (`content=''`), one with
 * `columnsize=0` (no list of its rows: only a rebuild could fill it, which indexes every row of
 * the content, wrong for an index over some of them), or one over a table the backup leaves out.
 */
function declaredIndex(entry: SchemaEntry, kindOf: ReadonlyMap<string, string>, contents: ReadonlySet<string>) {
  const refuse = (why: string) => new BackupPlanError(`The virtual table ${entry.name} ${why}.`);
  let options: ReadonlyMap<string, string>;
  try {
    const declaration = virtualTableDeclaration(entry.sql ?? "");
    if (declaration?.module.toLowerCase() !== "fts5")
      throw refuse(
        `(module ${declaration?.module ?? "unknown"}) holds its own data; the backup copies ordinary tables and FTS5 indexes over another table's content only`,
      );
    options = fts5Declaration(declaration.args).options;
  } catch (error) {
    if (error instanceof DeclarationError) throw refuse(`has a declaration the backup cannot read (${error.message})`);
    throw error;
  }
  const content = options.get("content");
  if (!content)
    throw refuse(
      "is an FTS5 index holding its own copy of the text, or none (no content= table); the backup copies only FTS5 indexes over another table's content",
    );
  const source = `${entry.name}_docsize`;
  if (options.get("columnsize") === "0" || kindOf.get(source) !== "shadow")
    throw refuse(
      `is an FTS5 index without ${source} (declared with columnsize=0): it keeps no list of the rows of ${content} it holds, so no restore could make it hold the same ones`,
    );
  if (!contents.has(folded(content))) throw refuse(`indexes ${content}, which is neither a table the backup copies nor a view`);
  return { name: entry.name, content, contentRowid: options.get("content_rowid") ?? "rowid", source };
}

/** The tables, each after the tables it references (a self-reference or a cycle keeps creation order). */
function parentsFirst(tables: Map<string, PlannedTable & { parents: string[] }>): PlannedTable[] {
  const ordered: PlannedTable[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string) => {
    const table = tables.get(name);
    if (!table || state.has(name)) return;
    state.set(name, "visiting");
    for (const parent of table.parents) if (parent !== name) visit(parent);
    state.set(name, "done");
    const { parents: _, ...planned } = table;
    ordered.push(planned);
  };
  for (const name of tables.keys()) visit(name);
  return ordered;
}

/** The read caches' generations (migrations/0020), exactly, or null when the table does not exist. */
export async function readGenerations(db: Db, tables?: readonly string[]): Promise<Record<string, string> | null> {
  if (tables && !tables.includes("read_generations")) return null;
  const rows = await db.$client
    .prepare("SELECT name, CAST(generation AS TEXT) AS generation FROM read_generations ORDER BY name")
    .all<{ name: string; generation: string }>();
  return Object.fromEntries((rows.results ?? []).map((row) => [row.name, row.generation]));
}

/** SQLite's limit on a function's arguments is 127 by default: wider tables nest the concatenation. */
const MAX_ARGUMENTS = 100;

function quotedValues(columns: readonly string[]): string {
  const quoted = columns.map((column) => `quote(${quoteIdentifier(column)})`);
  if (quoted.length === 1) return quoted[0]!;
  const groups: string[] = [];
  for (let i = 0; i < quoted.length; i += MAX_ARGUMENTS) groups.push(`concat_ws(',', ${quoted.slice(i, i + MAX_ARGUMENTS).join(", ")})`);
  return groups.length === 1 ? groups[0]! : `concat_ws(',', ${groups.join(", ")})`;
}

/** The query of one page of a table: `[rowid, the row's values as SQL literals]` after `?1`, up to the cut `?2`, at most `?3` rows. */
export function pageQuery(table: PlannedTable): string {
  const values = table.columns.length === 0 ? "''" : quotedValues(table.columns);
  return `SELECT rowid, ${values} FROM ${quoteIdentifier(table.name)} WHERE rowid > ?1 AND rowid <= ?2 ORDER BY rowid LIMIT ?3`;
}

/** What each statement starts with: `INSERT INTO "t"(rowid?, "a", "b") VALUES`. */
export function insertPrefix(table: PlannedTable): string {
  const columns = [...(table.rowid ? ["rowid"] : []), ...table.columns.map(quoteIdentifier)];
  return `INSERT INTO ${quoteIdentifier(table.name)}(${columns.join(",")}) VALUES`;
}

/** Rows per `INSERT`, and its length in UTF-16 units: at most 90 KB of UTF-8, under D1's 100 KB per statement. */
const ROWS_PER_STATEMENT = 200;
const STATEMENT_CHARS = 30_000;

/**
 * A page of rows (`[rowid, values as SQL literals]`) as SQL text: multi-row `INSERT`s, one per
 * line, each of at most 200 rows and 30,000 characters (a longer row is a statement of its own).
 */
export function insertStatements(table: PlannedTable, prefix: string, rows: readonly (readonly [number, string])[]): string {
  let text = "";
  let statement = "";
  let count = 0;
  for (const [rowid, values] of rows) {
    const tuple = table.rowid ? `(${rowid},${values})` : `(${values})`;
    if (count > 0 && (count >= ROWS_PER_STATEMENT || statement.length + tuple.length + 1 > STATEMENT_CHARS)) {
      text += `${statement};\n`;
      count = 0;
    }
    statement = count === 0 ? prefix + tuple : `${statement},${tuple}`;
    count++;
  }
  return count > 0 ? `${text}${statement};\n` : text;
}

/** The query of one page of an index's documents: `[rowid]` after `?1`, up to the cut `?2`, at most `?3` rows. */
export function indexPageQuery(index: PlannedIndex): string {
  return `SELECT id FROM ${quoteIdentifier(index.source)} WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3`;
}

/**
 * What each statement of an index's file starts with; a list of rowids and `)` follow. The restore
 * (scripts/backup/restore-core.mjs, `fillPrefix`) makes the same text from the manifest and runs
 * only statements that are it.
 */
export function fillPrefix(index: PlannedIndex): string {
  const columns = index.columns.map(quoteIdentifier).join(",");
  const key = quoteIdentifier(index.contentRowid);
  return `INSERT INTO ${quoteIdentifier(index.name)}(rowid,${columns}) SELECT ${key},${columns} FROM ${quoteIdentifier(index.content)} WHERE ${key} IN (`;
}

/** Rowids as statements that index those rows again, one per line, each of at most 30,000 characters. */
export function fillStatements(prefix: string, rowids: readonly number[]): string {
  let text = "";
  let list = "";
  for (const rowid of rowids) {
    const item = String(rowid);
    if (list !== "" && prefix.length + list.length + item.length + 3 > STATEMENT_CHARS) {
      text += `${prefix}${list});\n`;
      list = "";
    }
    list = list === "" ? item : `${list},${item}`;
  }
  return list === "" ? text : `${text}${prefix}${list});\n`;
}

/** A page as the database returns it: the rowid first, then (for a table) the row's values as SQL literals. */
export type PageRow = readonly [number, ...string[]];

/** How one file of a backup is read and written: a table's rows, or the rows an index holds. */
export interface FileSource {
  readonly name: string;
  readonly cut: number | null;
  /** One page: rowids after `?1`, up to `?2`, at most `?3`, in order, each row's rowid first. */
  readonly query: string;
  /** A page as the file's SQL text. */
  text(page: readonly PageRow[]): string;
}

export function fileSource(planned: PlannedTable | PlannedIndex): FileSource {
  if ("source" in planned) {
    const prefix = fillPrefix(planned);
    return {
      name: planned.name,
      cut: planned.cut,
      query: indexPageQuery(planned),
      text: (page) =>
        fillStatements(
          prefix,
          page.map(([id]) => id),
        ),
    };
  }
  const prefix = insertPrefix(planned);
  return {
    name: planned.name,
    cut: planned.cut,
    query: pageQuery(planned),
    text: (page) => insertStatements(planned, prefix, page as readonly (readonly [number, string])[]),
  };
}
