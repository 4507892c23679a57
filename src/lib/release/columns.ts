/**
 * The column model a release table is written with: one list of columns drives the CSV header,
 * the Parquet schema and the Table Schema fields of datapackage.json, so the three cannot drift.
 */

/**
 * A column's type. Integers are JavaScript numbers (int64 up to 2^53, which every id here fits);
 * `datetime` is UTC with millisecond precision; `object` and `array` hold JSON (compact text in
 * CSV, UTF-8 text in Parquet).
 */
export type ColumnType = "int32" | "int64" | "double" | "boolean" | "string" | "datetime" | "object" | "array";

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

/**
 * One row as its values in column order, as a query's raw rows come (`D1PreparedStatement.raw()`):
 * no object per row, no lookup by name. It must hold exactly one value per column.
 */
export type TableValues = readonly unknown[];

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

/** A row of values must hold one per column: a query selecting other columns is a bug, caught here. */
export function checkRowLength(columns: readonly Column[], values: TableValues, index: number): void {
  if (values.length !== columns.length) {
    throw new TableDataError(
      columns[Math.min(values.length, columns.length - 1)]!.name,
      index,
      `expected ${columns.length} values, got ${values.length}`,
    );
  }
}

/**
 * Rows checked against their columns, once for both writers of a table: every cell, row after
 * row (one flat array, not an array per row). Made by `checkRows` or `checkValues`; a writer takes
 * it only for its own column list.
 */
export interface CheckedRows {
  readonly columns: readonly Column[];
  readonly cells: readonly Cell[];
  readonly count: number;
}

/** Checks rows given by name; throws TableDataError at the first cell that does not fit. `first` numbers the rows in errors. */
export function checkRows(columns: readonly Column[], rows: readonly TableRow[], first: number): CheckedRows {
  const width = columns.length;
  const cells = new Array<Cell>(rows.length * width);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    checkRowKeys(columns, row, first + r);
    for (let c = 0; c < width; c++) cells[r * width + c] = toCell(columns[c]!, row[columns[c]!.name], first + r);
  }
  return { columns, cells, count: rows.length };
}

/** Checks rows given as values in column order (a query's raw rows); the same checks. */
export function checkValues(columns: readonly Column[], rows: readonly TableValues[], first: number): CheckedRows {
  const width = columns.length;
  const cells = new Array<Cell>(rows.length * width);
  for (let r = 0; r < rows.length; r++) {
    const values = rows[r]!;
    checkRowLength(columns, values, first + r);
    for (let c = 0; c < width; c++) cells[r * width + c] = toCell(columns[c]!, values[c], first + r);
  }
  return { columns, cells, count: rows.length };
}

/** Throws unless `rows` were checked against exactly this column list (the same array). */
export function assertCheckedFor(columns: readonly Column[], rows: CheckedRows): void {
  if (rows.columns !== columns) throw new Error("these rows were checked against another column list");
}

/** The checked value of one cell; throws TableDataError when it does not fit the column. */
export function toCell(column: Column, value: unknown, row: number): Cell {
  if (value === null || value === undefined) {
    if (column.nullable === false) throw new TableDataError(column.name, row, "null in a non-null column");
    return null;
  }
  switch (column.type) {
    case "int32":
      if (!Number.isInteger(value) || (value as number) < INT32_MIN || (value as number) > INT32_MAX) {
        return mismatch(column, row, value, "a 32-bit integer");
      }
      return value as number;
    case "int64":
      return Number.isSafeInteger(value) ? (value as number) : mismatch(column, row, value, "a safe integer");
    case "double":
      return typeof value === "number" && Number.isFinite(value) ? value : mismatch(column, row, value, "a finite number");
    case "boolean":
      if (typeof value === "boolean") return value;
      return value === 0 || value === 1 ? value === 1 : mismatch(column, row, value, "a boolean or 0/1");
    case "string":
      return typeof value === "string" ? value : mismatch(column, row, value, "a string");
    case "datetime": {
      const ms = value instanceof Date ? value.getTime() : typeof value === "number" ? value * 1000 : NaN;
      return Number.isSafeInteger(ms) ? ms : mismatch(column, row, value, "a Date or epoch seconds");
    }
    case "object":
    case "array":
      return jsonText(column.type, value) ?? mismatch(column, row, value, `JSON ${column.type === "object" ? "an object" : "an array"}`);
  }
}

// Not a closure inside toCell: a table checks millions of cells, and a bundler that keeps function
// names (wrangler's does) would name every closure made per cell (measured: a quarter of a build).
function mismatch(column: Column, row: number, value: unknown, expected: string): never {
  throw new TableDataError(column.name, row, `expected ${expected}, got ${describe(value)}`);
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

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

// Years 1970 to 9999: what `toISOString` writes with four digits; other times go through Date.
const ARITHMETIC_MIN_MS = 0;
const ARITHMETIC_MAX_MS = 253_402_300_800_000;

let lastMs = Number.NaN;
let lastText = "";

/**
 * ISO-8601 UTC: seconds like the API (`2026-05-01T12:00:00Z`), milliseconds only when present.
 * The text `Date#toISOString` gives, computed by arithmetic (days to a civil date) and the last
 * answer kept: a table writes one per row and column, and neighbouring rows often share a time
 * (a product's components are created with it).
 */
export function isoDatetime(ms: number): string {
  if (ms === lastMs) return lastText;
  let text: string;
  if (ms >= ARITHMETIC_MIN_MS && ms < ARITHMETIC_MAX_MS && Number.isInteger(ms)) {
    const days = Math.floor(ms / 86_400_000);
    const inDay = ms - days * 86_400_000;
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar, as Date uses).
    const z = days + 719_468;
    const era = Math.floor(z / 146_097);
    const doe = z - era * 146_097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153);
    const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
    const month = mp < 10 ? mp + 3 : mp - 9;
    const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    const seconds = Math.floor(inDay / 1000);
    const millis = inDay - seconds * 1000;
    text =
      `${year}-${pad2(month)}-${pad2(day)}T${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}` +
      (millis === 0 ? "Z" : `.${millis < 100 ? (millis < 10 ? "00" : "0") : ""}${millis}Z`);
  } else {
    text = new Date(ms).toISOString().replace(".000Z", "Z");
  }
  lastMs = ms;
  lastText = text;
  return text;
}
