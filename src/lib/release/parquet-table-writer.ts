import { ByteWriter } from "hyparquet-writer/src/bytewriter.js";
import { ParquetWriter } from "hyparquet-writer/src/parquet-writer.js";
import type { ByteSink } from "./byte-sink";
import {
  assertCheckedFor,
  type Cell,
  type CheckedRows,
  type Column,
  checkColumns,
  checkRows,
  checkValues,
  type TableRow,
  type TableValues,
} from "./columns";
import { fromTaggedJson, toTaggedJson } from "./tagged-json";

// The writer's own types, so that they match the hyparquet version it was built against.
type ColumnChunk = ParquetWriter["row_groups"][number]["columns"][number];
type WriterOptions = ConstructorParameters<typeof ParquetWriter>[0];
type SchemaElement = WriterOptions["schema"][number];
type ColumnSource = Parameters<ParquetWriter["write"]>[0]["columnData"][number];

export interface ParquetWriterOptions {
  /** Most rows in one row group (default 20,000). */
  readonly rowGroupRows?: number;
  /** A row group is also cut when its cells hold about this many bytes (default 8 MiB). */
  readonly rowGroupBytes?: number;
}

/** What a later invocation needs to carry on with the same file (JSON-safe). */
export interface ParquetWriterState {
  /** The column list the file was started with; a resume with other columns is refused. */
  readonly columns: string;
  /** Bytes of the file so far, all of them in the sink. */
  readonly bytes: number;
  readonly rows: number;
  /** The row groups' metadata the footer will hold (tagged JSON). */
  readonly footer: string;
}

const DEFAULT_ROW_GROUP_ROWS = 20_000;
const TEXT_TYPES: ReadonlySet<Column["type"]> = new Set(["string", "object", "array"]);
const DEFAULT_ROW_GROUP_BYTES = 8 * 1024 * 1024;

/** The writer's output buffer, lent to the sink and reused after each row group. */
class LentBuffer extends ByteWriter {
  take(): Uint8Array {
    return new Uint8Array(this.buffer, 0, this.index);
  }
  reuse(): void {
    this.index = 0;
  }
}

/**
 * A release table as Parquet, written with hyparquet-writer's incremental ParquetWriter: rows are
 * collected column by column until a row group is full (by rows or by bytes), that row group is
 * encoded and handed to the sink, and its memory is reused; only the footer's metadata grows
 * (a few hundred bytes per column per row group). SNAPPY pages, statistics, offset indexes.
 *
 * Types: int32/int64/double/boolean as themselves, text and JSON as UTF-8 STRING, datetimes as
 * INT64 TIMESTAMP(MILLIS, adjusted to UTC), which pandas, Polars and DuckDB read as UTC-aware
 * timestamps. Non-null columns are REQUIRED, the others OPTIONAL.
 */
export class ParquetTableWriter {
  private readonly rowGroupRows: number;
  private readonly rowGroupBytes: number;
  private buffered: Cell[][];
  /** Indexes of the columns whose cells are text (string, object, array). */
  private readonly textColumns: readonly number[];
  private bufferedRows = 0;
  private bufferedBytes = 0;
  private finished = false;

  private constructor(
    private readonly sink: ByteSink,
    private readonly columns: readonly Column[],
    private readonly output: LentBuffer,
    private readonly parquet: ParquetWriter,
    options: ParquetWriterOptions,
  ) {
    this.rowGroupRows = positive(options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS, "rowGroupRows");
    this.rowGroupBytes = positive(options.rowGroupBytes ?? DEFAULT_ROW_GROUP_BYTES, "rowGroupBytes");
    this.buffered = columns.map(() => []);
    this.textColumns = columns.flatMap((column, c) => (TEXT_TYPES.has(column.type) ? [c] : []));
  }

  static create(sink: ByteSink, columns: readonly Column[], options: ParquetWriterOptions = {}): ParquetTableWriter {
    checkColumns(columns);
    const output = new LentBuffer(64 * 1024);
    const parquet = new ParquetWriter({ writer: output, schema: parquetSchema(columns) });
    return new ParquetTableWriter(sink, columns, output, parquet, options);
  }

  /** Continues a file from `checkpoint()`'s state; its bytes so far went into `sink`. */
  static resume(
    sink: ByteSink,
    columns: readonly Column[],
    state: ParquetWriterState,
    options: ParquetWriterOptions = {},
  ): ParquetTableWriter {
    checkColumns(columns);
    if (state.columns !== columnsKey(columns)) throw new Error("the Parquet state was written for other columns");
    const footer = fromTaggedJson(state.footer) as Pick<ParquetWriter, "row_groups" | "pendingIndexes">;
    const output = new LentBuffer(64 * 1024);
    const parquet = new ParquetWriter({ writer: output, schema: parquetSchema(columns) });
    // The constructor wrote the leading magic number again: drop it and stand where the file is.
    output.reuse();
    output.offset = state.bytes;
    parquet.row_groups = footer.row_groups;
    parquet.pendingIndexes = footer.pendingIndexes;
    parquet.num_rows = BigInt(state.rows);
    return new ParquetTableWriter(sink, columns, output, parquet, options);
  }

  get rowsWritten(): number {
    return Number(this.parquet.num_rows) + this.bufferedRows;
  }

  /** Appends rows; throws TableDataError (nothing of the batch taken) if one does not fit. */
  async write(rows: readonly TableRow[]): Promise<void> {
    this.assertOpen();
    await this.writeChecked(checkRows(this.columns, rows, this.rowsWritten));
  }

  /** Appends rows given as values in column order (a query's raw rows); the same checks. */
  async writeValues(rows: readonly TableValues[]): Promise<void> {
    this.assertOpen();
    await this.writeChecked(checkValues(this.columns, rows, this.rowsWritten));
  }

  /** Appends rows already checked against this table's columns (one check for both files of a table). */
  async writeChecked(rows: CheckedRows): Promise<void> {
    this.assertOpen();
    assertCheckedFor(this.columns, rows);
    await this.take(rows.cells, rows.count);
  }

  /** Buffers checked rows column by column, encoding a row group whenever one is full. */
  private async take(cells: readonly Cell[], count: number): Promise<void> {
    const width = this.columns.length;
    // A row's cells count their length when text, 8 bytes otherwise (nulls too): only the text
    // columns need looking at.
    const fixedBytes = 8 * (width - this.textColumns.length);
    for (let start = 0; start < count; ) {
      // The rows that go into the current row group, up to the first that fills it.
      let end = start;
      let full = false;
      while (end < count && !full) {
        let bytes = fixedBytes;
        for (const c of this.textColumns) {
          const cell = cells[end * width + c];
          bytes += typeof cell === "string" ? cell.length : 8;
        }
        this.bufferedBytes += bytes;
        this.bufferedRows += 1;
        end += 1;
        full = this.bufferedRows >= this.rowGroupRows || this.bufferedBytes >= this.rowGroupBytes;
      }
      // Then column by column.
      for (let c = 0; c < width; c++) {
        const column = this.buffered[c]!;
        for (let at = start * width + c, last = end * width; at < last; at += width) column.push(cells[at] as Cell);
      }
      start = end;
      if (full) await this.writeRowGroup();
    }
  }

  /** Writes the rows held so far as a row group and returns the state to resume from. */
  async checkpoint(): Promise<ParquetWriterState> {
    this.assertOpen();
    await this.writeRowGroup();
    await this.drain();
    const { row_groups, pendingIndexes } = this.parquet;
    return {
      columns: columnsKey(this.columns),
      bytes: this.output.offset,
      rows: Number(this.parquet.num_rows),
      footer: toTaggedJson({ row_groups, pendingIndexes }),
    };
  }

  /** Writes the last row group and the footer. */
  async finish(): Promise<{ rows: number; rowGroups: number; bytes: number }> {
    this.assertOpen();
    await this.writeRowGroup();
    this.finished = true;
    this.parquet.finish();
    await this.drain();
    return { rows: Number(this.parquet.num_rows), rowGroups: this.parquet.row_groups.length, bytes: this.output.offset };
  }

  private async writeRowGroup(): Promise<void> {
    if (this.bufferedRows === 0) return;
    // The statistics of number, boolean and time columns are computed here, on the checked cells
    // (plain comparisons, before the conversion to bigint), rather than by the writer's generic
    // comparisons of every value; text columns keep the writer's (UTF-8 byte order).
    const statistics = this.columns.map((column, c) => (TEXT_TYPES.has(column.type) ? null : cellStatistics(column, this.buffered[c]!)));
    const columnData: ColumnSource[] = this.columns.map((column, c) => ({
      name: column.name,
      data: parquetValues(column, this.buffered[c]!),
      ...(statistics[c] ? { statistics: false } : {}),
    }));
    const rows = this.bufferedRows;
    this.buffered = this.columns.map(() => []);
    this.bufferedRows = 0;
    this.bufferedBytes = 0;
    // One row group per call: the writer encodes it into `output` (synchronously, as `output`
    // has no flush hook), and the bytes go to the sink before the next rows are taken.
    await this.parquet.write({ columnData, rowGroupSize: rows });
    const chunks = this.parquet.row_groups.at(-1)!.columns;
    const indexes = this.parquet.pendingIndexes.slice(-chunks.length);
    statistics.forEach((computed, c) => {
      if (computed === null) return;
      const meta = chunks[c]!.meta_data!;
      meta.statistics = computed;
      // What the writer records with its own statistics: the pages by type and encoding.
      meta.encoding_stats = [
        ...(meta.dictionary_page_offset === undefined
          ? []
          : [{ page_type: "DICTIONARY_PAGE" as const, encoding: "PLAIN" as const, count: 1 }]),
        {
          page_type: "DATA_PAGE_V2" as const,
          encoding: meta.encodings.at(-1)!,
          count: indexes[c]?.offsetIndex?.page_locations.length ?? 1,
        },
      ];
    });
    await this.drain();
  }

  private async drain(): Promise<void> {
    if (this.output.index === 0) return;
    await this.sink.write(this.output.take());
    this.output.reuse();
  }

  private assertOpen(): void {
    if (this.finished) throw new Error("the Parquet file is already finished");
  }
}

function parquetSchema(columns: readonly Column[]): SchemaElement[] {
  const root: SchemaElement = { name: "root", num_children: columns.length };
  return [root, ...columns.map(schemaElement)];
}

function schemaElement(column: Column): SchemaElement {
  const base = { name: column.name, repetition_type: column.nullable === false ? "REQUIRED" : "OPTIONAL" } as const;
  switch (column.type) {
    case "int32":
      return { ...base, type: "INT32" };
    case "int64":
      return { ...base, type: "INT64" };
    case "double":
      return { ...base, type: "DOUBLE" };
    case "boolean":
      return { ...base, type: "BOOLEAN" };
    case "string":
    case "object":
    case "array":
      return { ...base, type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } };
    case "datetime":
      return {
        ...base,
        type: "INT64",
        converted_type: "TIMESTAMP_MILLIS",
        logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
      };
  }
}

/** INT64 columns (integers and datetimes) take bigints; the rest go as checked. */
function parquetValues(column: Column, cells: Cell[]): ColumnSource["data"] {
  if (column.type !== "int64" && column.type !== "datetime") return cells as ColumnSource["data"];
  return cells.map((cell) => (cell === null ? null : BigInt(cell as number))) as ColumnSource["data"];
}

type Statistics = NonNullable<NonNullable<ColumnChunk["meta_data"]>["statistics"]>;

/**
 * Min, max and null count of a number, boolean or time column, as the Parquet writer would give
 * them: bounds of INT64 columns as bigints, a zero minimum as -0 and maximum as +0, NaN counted
 * for doubles (never any: the cells are finite), no bounds when every cell is null.
 */
function cellStatistics(column: Column, cells: readonly Cell[]): Statistics {
  let min: number | boolean | undefined;
  let max: number | boolean | undefined;
  let nulls = 0;
  for (const cell of cells) {
    if (cell === null) {
      nulls++;
      continue;
    }
    if (min === undefined || (cell as number) < (min as number)) min = cell as number | boolean;
    if (max === undefined || (cell as number) > (max as number)) max = cell as number | boolean;
  }
  const wide = column.type === "int64" || column.type === "datetime";
  const bound = (value: number | boolean | undefined, zero: number) =>
    value === undefined ? undefined : wide ? BigInt(value as number) : value === 0 ? zero : value;
  return {
    min_value: bound(min, -0),
    max_value: bound(max, 0),
    null_count: BigInt(nulls),
    ...(column.type === "double" ? { nan_count: 0n } : { nan_count: undefined }),
  } as Statistics;
}

function columnsKey(columns: readonly Column[]): string {
  return columns.map((c) => `${c.name}:${c.type}${c.nullable === false ? "!" : ""}`).join(",");
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}
