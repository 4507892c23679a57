/**
 * The column model a release table is written with: one list of columns drives the CSV header,
 * the Parquet schema and the Table Schema fields of datapackage.json, so the three cannot drift.
 */

/**
 * A column's type. Integers are JavaScript numbers (int64 up to 2^53, which every id here fits);
 * `datetime` is UTC with millisecond precision; `object` and `array` hold JSON (compact text in
 * CSV, UTF-8 text in Parquet).
 */
export type ColumnType =
  | "int32"
  | "int64"
  | "double"
  | "boolean"
  | "string"
  | "datetime"
  | "object"
  | "array";

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  /** Whether the column may hold null; true unless said otherwise. */
  readonly nullable?: boolean;
  /** Shown in datapackage.json. */
  readonly description?: string;
}

/**
 * One row: a value for every column, by name. A value the build reads from D1 goes in as is:
 * `datetime` takes a Date or a number of SECONDS since the epoch (the database stores
 * `unixepoch()`), `boolean` also takes SQLite's 0 and 1, `object`/`array` take a value to
 * serialise or text that is already JSON.
 */
export type TableRow = Readonly<Record<string, unknown>>;

/** A cell after checking: what both writers encode. Datetimes are epoch milliseconds. */
export type Cell = number | boolean | string | null;

/** A row that does not fit its columns: a bug in the build's query, never the user's input. */
export class TableDataError extends Error {
  constructor(
    readonly column: string,
    readonly row: number,
    message: string,
  ) {
    super(`column "${column}", row ${row}: ${message}`);
    this.name = "TableDataError";
  }
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a column list once, before any row: unique names a CSV header and SQL can carry. */
export function checkColumns(columns: readonly Column[]): void {
  if (columns.length === 0) throw new Error("a table needs at least one column");
  const seen = new Set<string>();
  for (const { name } of columns) {
    if (!NAME.test(name)) throw new Error(`column name "${name}" is not a plain identifier`);
    if (seen.has(name)) throw new Error(`column "${name}" appears twice`);
    seen.add(name);
  }
}

/**
 * Every column must be a key of the row (null or undefined is fine where allowed): a missing key
 * is a misspelt SQL alias, which would otherwise become a column of nulls without a word.
 */
export function checkRowKeys(columns: readonly Column[], row: TableRow, index: number): void {
  for (const { name } of columns) {
    if (!(name in row)) throw new TableDataError(name, index, "missing from the row");
  }
}

/** The checked value of one cell; throws TableDataError when it does not fit the column. */
export function toCell(column: Column, value: unknown, row: number): Cell {
  if (value === null || value === undefined) {
    if (column.nullable === false) throw new TableDataError(column.name, row, "null in a non-null column");
    return null;
  }
  const fail = (expected: string): never => {
    throw new TableDataError(column.name, row, `expected ${expected}, got ${describe(value)}`);
  };
  switch (column.type) {
    case "int32":
      if (!Number.isInteger(value) || (value as number) < INT32_MIN || (value as number) > INT32_MAX) {
        return fail("a 32-bit integer");
      }
      return value as number;
    case "int64":
      return Number.isSafeInteger(value) ? (value as number) : fail("a safe integer");
    case "double":
      return typeof value === "number" && Number.isFinite(value) ? value : fail("a finite number");
    case "boolean":
      if (typeof value === "boolean") return value;
      return value === 0 || value === 1 ? value === 1 : fail("a boolean or 0/1");
    case "string":
      return typeof value === "string" ? value : fail("a string");
    case "datetime": {
      const ms = value instanceof Date ? value.getTime() : typeof value === "number" ? value * 1000 : NaN;
      return Number.isSafeInteger(ms) ? ms : fail("a Date or epoch seconds");
    }
    case "object":
    case "array":
      return jsonText(column.type, value) ?? fail(`JSON ${column.type === "object" ? "an object" : "an array"}`);
  }
}

function jsonText(type: "object" | "array", value: unknown): string | undefined {
  const open = type === "object" ? "{" : "[";
  if (typeof value === "string") return value.startsWith(open) ? value : undefined;
  if (typeof value !== "object" || Array.isArray(value) !== (type === "array")) return undefined;
  return JSON.stringify(value);
}

function describe(value: unknown): string {
  if (typeof value === "string") return `a string of ${value.length} characters`;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return value instanceof Date ? "an invalid Date" : typeof value;
}

/** ISO-8601 UTC: seconds like the API (`2026-05-01T12:00:00Z`), milliseconds only when present. */
export function isoDatetime(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}
