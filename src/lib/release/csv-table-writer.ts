import { csvCell, csvRow } from "../csv";
import type { ByteSink } from "./byte-sink";
import {
  assertCheckedFor,
  type Cell,
  type CheckedRows,
  type Column,
  checkColumns,
  checkRows,
  checkValues,
  isoDatetime,
  type TableRow,
  type TableValues,
} from "./columns";

/** What a later invocation needs to carry on with the same file (JSON-safe). */
export interface CsvWriterState {
  readonly headerWritten: boolean;
  readonly rows: number;
}

// Text is encoded and handed to the sink in pieces of about this many UTF-16 units, so a large
// batch of rows never becomes one large string.
const FLUSH_CHARS = 256 * 1024;
const encoder = new TextEncoder();

/**
 * A release table as CSV: UTF-8 WITHOUT a byte-order mark (the Data Package standard's
 * recommendation; unlike the live export, which is read by spreadsheets), RFC 4180 with CRLF,
 * a header row of the column names, the export's formula guard on text cells (src/lib/csv.ts).
 * Null is an empty cell; datetimes are ISO-8601 UTC; JSON columns are compact JSON text.
 */
export class CsvTableWriter {
  private headerWritten: boolean;
  private rows: number;
  private pending: string[] = [];
  private pendingChars = 0;

  private constructor(
    private readonly sink: ByteSink,
    private readonly columns: readonly Column[],
    state: CsvWriterState,
  ) {
    checkColumns(columns);
    this.headerWritten = state.headerWritten;
    this.rows = state.rows;
  }

  static create(sink: ByteSink, columns: readonly Column[]): CsvTableWriter {
    return new CsvTableWriter(sink, columns, { headerWritten: false, rows: 0 });
  }

  /** Continues a file whose bytes so far went into `sink` (a resumed multipart sink). */
  static resume(sink: ByteSink, columns: readonly Column[], state: CsvWriterState): CsvTableWriter {
    if (!Number.isSafeInteger(state.rows) || state.rows < 0 || (!state.headerWritten && state.rows > 0)) {
      throw new Error("not a CSV writer state");
    }
    return new CsvTableWriter(sink, columns, state);
  }

  get rowsWritten(): number {
    return this.rows;
  }

  /** Appends rows; throws TableDataError (nothing of the batch written) if one does not fit. */
  async write(rows: readonly TableRow[]): Promise<void> {
    await this.writeChecked(checkRows(this.columns, rows, this.rows));
  }

  /** Appends rows given as values in column order (a query's raw rows); the same checks. */
  async writeValues(rows: readonly TableValues[]): Promise<void> {
    await this.writeChecked(checkValues(this.columns, rows, this.rows));
  }

  /** Appends rows already checked against this table's columns (one check for both files of a table). */
  async writeChecked(rows: CheckedRows): Promise<void> {
    assertCheckedFor(this.columns, rows);
    if (!this.headerWritten) this.push(csvRow(this.columns.map((c) => c.name)));
    this.headerWritten = true;
    // The text of many rows as one string, cell by cell (no string or array per row), encoded
    // and handed to the sink every FLUSH_CHARS.
    const { columns } = this;
    const width = columns.length;
    const { cells } = rows;
    let text = "";
    for (let r = 0, at = 0; r < rows.count; r++) {
      for (let c = 0; c < width; c++, at++) {
        const cell = cells[at]!;
        if (c > 0) text += ",";
        if (cell !== null) text += cellText(columns[c]!, cell);
      }
      text += "\r\n";
      if (text.length >= FLUSH_CHARS) {
        this.push(text);
        text = "";
        await this.flush();
      }
    }
    this.push(text);
    this.rows += rows.count;
    await this.flush();
  }

  /** The state after the last write (all its bytes are in the sink). */
  state(): CsvWriterState {
    return { headerWritten: this.headerWritten, rows: this.rows };
  }

  /** Ends the table; a table without rows is its header alone. */
  async finish(): Promise<{ rows: number }> {
    if (!this.headerWritten) await this.write([]);
    return { rows: this.rows };
  }

  private push(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length;
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const bytes = encoder.encode(this.pending.join(""));
    this.pending = [];
    this.pendingChars = 0;
    await this.sink.write(bytes);
  }
}

// Text that is written as it is: no formula start, nothing to quote, no NUL (csvCell's cases).
const SPECIAL = /^[=+\-@\t\r]|[\u0000",\r\n]/;

/** A checked cell (not null) as CSV text: ISO-8601 for a time, RFC 4180 and the formula guard otherwise. */
function cellText(column: Column, cell: Exclude<Cell, null>): string {
  if (typeof cell === "string") return SPECIAL.test(cell) ? csvCell(cell) : cell;
  if (typeof cell === "number") return column.type === "datetime" ? isoDatetime(cell) : String(cell);
  return csvCell(cell);
}
