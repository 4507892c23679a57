import { csvCell, csvRow } from "../csv";
import type { ByteSink } from "./byte-sink";
import {
  assertCheckedFor,
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

// Rows are encoded into one buffer, handed to the sink whenever it holds this many bytes (the sink
// copies them; the buffer is then reused).
const FLUSH_BYTES = 256 * 1024;
const encoder = new TextEncoder();
// Text longer than this goes to TextEncoder whole; shorter text is copied by hand while ASCII
// (a call into the runtime costs more than the copy of a few characters).
const LONG = 64;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/**
 * A release table as CSV: UTF-8 WITHOUT a byte-order mark (the Data Package standard's
 * recommendation; unlike the live export, which is read by spreadsheets), RFC 4180 with CRLF,
 * a header row of the column names, the export's formula guard on text cells (src/lib/csv.ts).
 * Null is an empty cell; datetimes are ISO-8601 UTC; JSON columns are compact JSON text.
 */
export class CsvTableWriter {
  private headerWritten: boolean;
  private rows: number;
  private out = new Uint8Array(FLUSH_BYTES + 64 * 1024);
  private fill = 0;

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
    if (!this.headerWritten) this.text(csvRow(this.columns.map((c) => c.name)));
    this.headerWritten = true;
    // Cell by cell into the byte buffer: no string per row, no text to encode again.
    const { columns } = this;
    const width = columns.length;
    const { cells } = rows;
    for (let r = 0, at = 0; r < rows.count; r++) {
      for (let c = 0; c < width; c++, at++) {
        if (c > 0) this.byte(COMMA);
        const cell = cells[at]!;
        if (cell === null) continue;
        if (typeof cell === "string") this.text(SPECIAL.test(cell) ? csvCell(cell) : cell);
        else if (typeof cell === "number") {
          if (columns[c]!.type === "datetime") this.text(isoDatetime(cell));
          else if (Number.isSafeInteger(cell)) this.integer(cell);
          else this.text(String(cell));
        } else this.text(csvCell(cell));
      }
      this.byte(CR);
      this.byte(LF);
      if (this.fill >= FLUSH_BYTES) await this.flush();
    }
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

  /** Room for `bytes` more bytes (a row longer than the slack grows the buffer). */
  private reserve(bytes: number): void {
    if (this.fill + bytes <= this.out.length) return;
    const grown = new Uint8Array(Math.max(this.out.length * 2, this.fill + bytes));
    grown.set(this.out.subarray(0, this.fill));
    this.out = grown;
  }

  private byte(value: number): void {
    this.reserve(1);
    this.out[this.fill++] = value;
  }

  /** UTF-8 of `text`: short ASCII copied by hand, the rest (from the first non-ASCII character) by TextEncoder. */
  private text(text: string): void {
    const length = text.length;
    this.reserve(length * 3);
    const out = this.out;
    let at = this.fill;
    if (length > LONG) {
      this.fill = at + encoder.encodeInto(text, out.subarray(at)).written;
      return;
    }
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) {
        at += encoder.encodeInto(i === 0 ? text : text.slice(i), out.subarray(at)).written;
        break;
      }
      out[at++] = code;
    }
    this.fill = at;
  }

  /** The digits of a safe integer, as String() writes them. */
  private integer(value: number): void {
    this.reserve(17);
    const out = this.out;
    let at = this.fill;
    let rest = value;
    if (rest < 0) {
      out[at++] = 0x2d;
      rest = -rest;
    }
    let digits = 1;
    for (let scale = 10; scale <= rest; scale *= 10) digits++;
    for (let i = at + digits - 1; i >= at; i--) {
      out[i] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    this.fill = at + digits;
  }

  private async flush(): Promise<void> {
    if (this.fill === 0) return;
    const bytes = this.out.subarray(0, this.fill);
    this.fill = 0;
    await this.sink.write(bytes);
  }
}

// Text that is written as it is: no formula start, nothing to quote, no NUL (csvCell's cases).
const SPECIAL = /^[=+\-@\t\r]|[\u0000",\r\n]/;
