import { eq, getTableName, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { AnySQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { isConstraintFailure } from "../../db/constraint-errors";
import { columnsOf } from "../../db/rows";
import { type AuditEvent, audit } from "../../lib/audit";
import { type PageQuery, pageWindow } from "../../lib/pagination";
import type { ApiError } from "../../lib/problem";
import { clearAfterWrite } from "../caching/kv-cache";
import { containsText } from "../products/query";

/**
 * What every reference-data kind (taxonomies, categories, materials, product types) does the
 * same way: the services and audit line of an admin write, duplicate checks, and the SQL of a paged
 * list, an insert, an update and a delete. Each kind names its table with a `RecordTable`.
 */

/** What an admin write needs: the database, the KV cache to clear and the log to audit to. */
export type ReferenceServices = Pick<Services, "db" | "bindings" | "log">;

/** The `kind` of an audit line. */
export type ReferenceKind = "taxonomy" | "category" | "material" | "product_type";

type ReferenceEvent = Extract<AuditEvent, `admin.reference.${string}`>;

/**
 * A kind's table: the schema's table with its `id` and the columns rows carry (for the query
 * builder), its name, and for the hand-written list SQL the alias it is read under and the
 * columns qualified by it (and bare, for `RETURNING`).
 */
export interface RecordTable {
  source: SQLiteTable;
  id: AnySQLiteColumn;
  fields: Record<string, AnySQLiteColumn>;
  table: string;
  alias: string;
  columns: SQL;
  returned: SQL;
}

type Columns<T extends SQLiteTable> = T["_"]["columns"];

/** The `RecordTable` of `source` read as `alias`, with `columns` in the order rows carry them. */
export function recordTable<T extends SQLiteTable & { id: AnySQLiteColumn }>(
  source: T,
  alias: string,
  columns: readonly (keyof Columns<T> & string)[],
): RecordTable & { table: T["_"]["name"] } {
  return {
    source,
    id: source.id,
    fields: columnsOf(source, columns),
    table: getTableName(source) as T["_"]["name"],
    alias,
    columns: sql.raw(columns.map((column) => `${alias}.${column}`).join(", ")),
    returned: sql.raw(columns.join(", ")),
  };
}

/** One column an update sets, with its value as stored. */
export interface Assignment {
  column: string;
  value: unknown;
}

/** Condition for a list read under `from.alias`: the name contains `text`, in any case (`%` and `_` are plain characters). */
export function nameContains(from: RecordTable, text: string): SQL {
  return containsText(sql.raw(`${from.alias}.name`), text);
}

/** The audit line of a committed admin write. */
export function auditReferenceWrite(
  svc: Pick<ReferenceServices, "log">,
  actor: SessionUser,
  event: ReferenceEvent,
  kind: ReferenceKind,
  id: number,
  extra: Record<string, unknown> = {},
): void {
  audit(svc.log, event, { actor_id: actor.id, kind, id, ...extra });
}

/**
 * After a committed write to a material or product type: the audit line, then the cleared
 * `reference-data` cache, so the answer only leaves once no cached read can contradict it.
 * Taxonomy and category handlers clear the cache themselves (`clearReferenceCache`).
 */
export async function referenceWritten(
  svc: ReferenceServices,
  actor: SessionUser,
  event: ReferenceEvent,
  kind: ReferenceKind,
  id: number,
  extra: Record<string, unknown> = {},
): Promise<void> {
  auditReferenceWrite(svc, actor, event, kind, id, extra);
  await clearAfterWrite(svc, "reference-data");
}

/** True when `error` (or one of its causes) is a UNIQUE violation over `columns` as SQLite names them (`table.a, table.b`). */
export function isUniqueViolation(error: unknown, columns: string): boolean {
  return isConstraintFailure(error, "UNIQUE", columns);
}

/** Runs `write`, answering `taken()` (a 409) when a UNIQUE index over `columns` refuses it. */
export async function refusingDuplicates<T>(columns: string, taken: () => ApiError, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, columns)) throw taken();
    throw error;
  }
}

/** One page of `from`'s rows matching `where`, in `order`, and how many match, in one round trip. */
export async function listPage<Row>(
  svc: Pick<Services, "db">,
  from: RecordTable,
  where: SQL,
  order: SQL,
  page: PageQuery,
): Promise<{ rows: Row[]; total: number }> {
  const source = sql.raw(`${from.table} ${from.alias}`);
  const { limit, offset } = pageWindow(page);
  // Raw: each kind's filters and sort terms are SQL over its alias (nameContains, orderClause, linkedToCategory).
  const [rows, counted] = await batchRows<[Row, { total: number }]>(svc.db, [
    sql`SELECT ${from.columns} FROM ${source} WHERE ${where} ${order} LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM ${source} WHERE ${where}`,
  ]);
  return { rows, total: counted[0]?.total ?? 0 };
}

/** The row `id` of `from` (no row when there is none). */
export function rowStatement(db: Db, from: RecordTable, id: number): SQLWrapper {
  return db.select(from.fields).from(from.source).where(eq(from.id, id));
}

/**
 * `INSERT` of one row of `into` from its column values as stored (JSON as its text, booleans as
 * 0/1: each goes in as it is, not through the schema's mapping), returning the row.
 */
export function insertStatement(db: Db, into: RecordTable, values: Record<string, unknown>): SQLWrapper {
  const stored = Object.fromEntries(Object.entries(values).map(([column, value]) => [column, sql`${value}`]));
  return db.insert(into.source).values(stored).returning(into.fields);
}

/** The members of `changes` that are given, among `columns`, as assignments; `stored` converts a value where the column needs it. */
export function assignments<C extends string>(
  columns: readonly C[],
  changes: Partial<Record<C, unknown>>,
  stored: (column: C, value: unknown) => unknown = (_, value) => value,
): Assignment[] {
  return columns.filter((column) => changes[column] !== undefined).map((column) => ({ column, value: stored(column, changes[column]) }));
}

/**
 * `UPDATE` of row `id` of `target`, returning it; `updated_at` moves only when a value really
 * changes. `guard` adds conditions to the `WHERE`: a refused update returns no row. Raw: the
 * `updated_at` rule compares every assigned value in SQL, and a guard is a condition of the update itself.
 */
export function updateStatement(target: RecordTable, id: number, set: readonly Assignment[], guard: SQL = sql``): SQL {
  const pairs = set.map(({ column, value }) => ({ column: sql.raw(column), value }));
  const assigned = sql.join(
    pairs.map(({ column, value }) => sql`${column} = ${value}`),
    sql`, `,
  );
  const differs = sql.join(
    pairs.map(({ column, value }) => sql`${column} IS NOT ${value}`),
    sql` OR `,
  );
  return sql`UPDATE ${sql.raw(target.table)} SET ${assigned}, updated_at = CASE WHEN ${differs} THEN unixepoch() ELSE updated_at END
    WHERE id = ${id} ${guard} RETURNING ${target.returned}`;
}

/** Which of `columns` differ between a row before and after an update: the `fields` of its audit line. */
export function changedFields<Row, C extends keyof Row & string>(columns: readonly C[], before: Row, after: Row): C[] {
  return columns.filter((column) => before[column] !== after[column]);
}

/** Deletes row `id` of `from`; false when there was none. */
export async function deleteRow(svc: Pick<Services, "db">, from: RecordTable, id: number): Promise<boolean> {
  const [rows] = await batchRows<[{ id: number }]>(svc.db, [svc.db.delete(from.source).where(eq(from.id, id)).returning({ id: from.id })]);
  return rows.length > 0;
}
