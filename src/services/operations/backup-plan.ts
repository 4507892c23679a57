import type { Db } from "../../db/client";

/**
 * What a backup copies and how (docs/operations.md, Backups): the schema as `sqlite_master` holds
 * it, and every table but D1's own (`_cf_*`), SQLite's internal ones (`sqlite_sequence` aside,
 * whose counters AUTOINCREMENT needs) and `backup_runs`, each read in rowid order as SQL
 * `INSERT`s whose values SQLite's `quote()` wrote (exact for every type: 64-bit integers, reals
 * that must round-trip, blobs as X'..'), so that a restore makes the same rows bit for bit. A full-text
 * index over another table's content (FTS5 with `content=`, such as `products_fts`) is not copied:
 * its shadow tables are SQLite's internal layout, and the restore rebuilds it from the content.
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

export interface BackupPlan {
  readonly schema: readonly SchemaEntry[];
  /** Referenced tables before the tables that reference them, so that a row read later never names a parent read earlier and deleted since. */
  readonly tables: readonly PlannedTable[];
  /** The read caches' generations when the backup began (exact, as text), to tell whether a write happened while it ran. */
  readonly generations: Readonly<Record<string, string>> | null;
  /** Full-text indexes over another table's content: the restore creates them empty and rebuilds them. */
  readonly rebuild: readonly string[];
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

/** Reads the schema and builds the plan, in three round trips whatever the number of tables. */
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
  const rebuild: string[] = [];
  const shadow = schema.filter((entry) => kindOf.get(entry.name) === "shadow").map((entry) => entry.name);
  for (const entry of schema) {
    if (kindOf.get(entry.name) !== "virtual") continue;
    // FTS5 over an external content table: everything it holds comes from that table.
    if (/^CREATE VIRTUAL TABLE\s.*\bUSING\s+fts5\s*\(.*\bcontent\s*=\s*'[^']+'/is.test(entry.sql ?? "")) rebuild.push(entry.name);
    else
      throw new BackupPlanError(
        `The table ${entry.name} is virtual and holds its own data; the backup copies ordinary tables and external-content FTS5 indexes only.`,
      );
  }
  const names = schema
    .filter((entry) => entry.type === "table" && kindOf.get(entry.name) === "table" && copied(entry.name))
    .map((entry) => entry.name);
  // Per table: its columns, whether it has a rowid, its foreign keys and its largest rowid.
  const statements = names.flatMap((name) => [
    client.prepare("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid").bind(name),
    client.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?").bind(name),
    client.prepare('SELECT DISTINCT "table" AS parent FROM pragma_foreign_key_list(?)').bind(name),
  ]);
  const described = statements.length ? await client.batch(statements) : [];
  const maxima = names.length
    ? await client.batch(names.map((name) => client.prepare(`SELECT max(rowid) AS cut FROM ${quoteIdentifier(name)}`)))
    : [];
  const tables = new Map<string, PlannedTable & { parents: string[] }>();
  names.forEach((name, i) => {
    const columns = (described[i * 3]!.results ?? []) as { name: string; type: string; pk: number }[];
    const withoutRowid = ((described[i * 3 + 1]!.results ?? []) as { wr: number }[])[0]?.wr === 1;
    if (withoutRowid) throw new BackupPlanError(`The table ${name} is WITHOUT ROWID; the backup pages by rowid.`);
    const parents = ((described[i * 3 + 2]!.results ?? []) as { parent: string }[]).map((row) => row.parent);
    const keys = columns.filter((column) => column.pk > 0);
    const rowidAlias = keys.length === 1 && keys[0]!.type.toUpperCase() === "INTEGER";
    const cut = ((maxima[i]!.results ?? []) as { cut: number | null }[])[0]?.cut ?? null;
    if (cut !== null && !Number.isSafeInteger(cut)) throw new BackupPlanError(`The table ${name} has rowids past 2^53.`);
    tables.set(name, { name, columns: columns.map((column) => column.name), rowid: !rowidAlias, cut, parents });
  });
  return { schema, tables: parentsFirst(tables), generations: await readGenerations(db, names), rebuild, shadow };
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
