import { type Column, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

// Row types derived from the drizzle schema (src/db/schema.ts), for the hand-written SQL that reads
// D1 directly (conditional writes, `RETURNING`, batches). The schema's keys are the columns' own
// names (one vocabulary in TypeScript and SQL), but such queries get what SQLite stores, where
// `$inferSelect` describes the row after drizzle's mapping (Date, boolean, parsed JSON): these
// types take the stored form.

/** What SQLite hands back for a column: timestamps as Unix seconds, booleans as 0/1, JSON as its text. */
type Stored<C extends Column> = C["_"]["columnType"] extends "SQLiteTimestamp" | "SQLiteBoolean"
  ? number
  : C["_"]["columnType"] extends "SQLiteTextJson" | "SQLiteBlobJson"
    ? string
    : C["_"]["data"];

type Value<C extends Column> = C["_"]["notNull"] extends true ? Stored<C> : Stored<C> | null;

type Columns<T extends SQLiteTable> = T["_"]["columns"];

/** One row of `T` as hand-written SQL reads it (`SELECT *`), keyed by column name. */
export type Row<T extends SQLiteTable> = {
  -readonly [K in keyof Columns<T> as Columns<T>[K]["_"]["name"]]: Value<Columns<T>[K]>;
};

/** The named columns of a row of `T`: what a statement selecting those columns returns. */
export type RowOf<T extends SQLiteTable, K extends keyof Row<T>> = Pick<Row<T>, K>;

/**
 * The query builder's selection (or `returning`) of the named columns of `T`. The schema keys
 * columns by their own names, so a row comes back keyed as `RowOf<T, K>`; run it through the
 * counting client (`db.all(query)`, `batchRows`), which hands back stored values.
 */
export function columnsOf<T extends SQLiteTable, K extends keyof Columns<T> & string>(table: T, names: readonly K[]): Pick<Columns<T>, K> {
  const columns = getTableColumns(table) as Columns<T>;
  return Object.fromEntries(names.map((name) => [name, columns[name]])) as Pick<Columns<T>, K>;
}

/** The same names as a bare column list, for the `SELECT`/`RETURNING` of hand-written SQL. */
export function columnList(names: readonly string[]): SQL {
  return sql.raw(names.join(", "));
}
