import { describe, expect, it } from "vitest";
import { checkValues, type TableRow } from "../../../src/lib/release/columns.ts";
import { CsvTableWriter } from "../../../src/lib/release/csv-table-writer.ts";
import { ParquetTableWriter } from "../../../src/lib/release/parquet-table-writer.ts";
import { batches, CollectingSink, RECORD_COLUMNS, recordRows } from "./support.ts";

// Rows as values in column order (what a query's raw rows give) make the same files as rows as objects.

const asValues = (rows: readonly TableRow[]) => rows.map((row) => RECORD_COLUMNS.map((column) => row[column.name]));

describe("writeValues", () => {
  it("writes byte for byte the CSV and Parquet files that write() makes of the same rows", { timeout: 30_000 }, async () => {
    const rows = [...recordRows(12_000)];
    const sinks = {
      csv: new CollectingSink(),
      csvValues: new CollectingSink(),
      csvChecked: new CollectingSink(),
      parquet: new CollectingSink(),
      parquetValues: new CollectingSink(),
      parquetChecked: new CollectingSink(),
    };
    const csv = CsvTableWriter.create(sinks.csv, RECORD_COLUMNS);
    const csvValues = CsvTableWriter.create(sinks.csvValues, RECORD_COLUMNS);
    const parquet = ParquetTableWriter.create(sinks.parquet, RECORD_COLUMNS, { rowGroupRows: 5_000 });
    const parquetValues = ParquetTableWriter.create(sinks.parquetValues, RECORD_COLUMNS, { rowGroupRows: 5_000 });
    // What the build does: each page checked once, then written to both files.
    const csvChecked = CsvTableWriter.create(sinks.csvChecked, RECORD_COLUMNS);
    const parquetChecked = ParquetTableWriter.create(sinks.parquetChecked, RECORD_COLUMNS, { rowGroupRows: 5_000 });
    let offset = 0;
    for (const batch of batches(rows, 1_000)) {
      const checked = checkValues(RECORD_COLUMNS, asValues(batch), offset);
      offset += batch.length;
      await csvChecked.writeChecked(checked);
      await parquetChecked.writeChecked(checked);
      await csv.write(batch);
      await csvValues.writeValues(asValues(batch));
      await parquet.write(batch);
      await parquetValues.writeValues(asValues(batch));
    }
    for (const writer of [csv, csvValues, csvChecked, parquet, parquetValues, parquetChecked]) await writer.finish();
    // Buffer comparison: a deep equality of megabytes would take vitest minutes.
    expect(Buffer.from(sinks.csvValues.bytes()).equals(Buffer.from(sinks.csv.bytes()))).toBe(true);
    expect(Buffer.from(sinks.parquetValues.bytes()).equals(Buffer.from(sinks.parquet.bytes()))).toBe(true);
    expect(Buffer.from(sinks.csvChecked.bytes()).equals(Buffer.from(sinks.csv.bytes()))).toBe(true);
    expect(Buffer.from(sinks.parquetChecked.bytes()).equals(Buffer.from(sinks.parquet.bytes()))).toBe(true);
    expect(sinks.parquet.bytes().length).toBeGreaterThan(100_000);
  });

  it("refuses a row with more or fewer values than columns, or a value that does not fit, and takes none of the batch", async () => {
    const csvSink = new CollectingSink();
    const csv = CsvTableWriter.create(csvSink, RECORD_COLUMNS);
    const parquet = ParquetTableWriter.create(new CollectingSink(), RECORD_COLUMNS);
    const [good, other] = asValues([...recordRows(2)]);
    for (const writer of [csv, parquet]) {
      await expect(writer.writeValues([good!, other!.slice(0, -1)])).rejects.toThrow(
        `row 1: expected ${RECORD_COLUMNS.length} values, got ${RECORD_COLUMNS.length - 1}`,
      );
      await expect(writer.writeValues([[...good!, "extra"]])).rejects.toThrow(
        `expected ${RECORD_COLUMNS.length} values, got ${RECORD_COLUMNS.length + 1}`,
      );
      await expect(writer.writeValues([["not an id", ...good!.slice(1)]])).rejects.toThrow('column "id", row 0: expected a safe integer');
      expect(writer.rowsWritten).toBe(0);
    }
    expect(csvSink.bytes()).toHaveLength(0);
  });

  it("takes checked rows only for the column list they were checked against", async () => {
    const [good] = asValues([...recordRows(1)]);
    const checked = checkValues([...RECORD_COLUMNS], [good!], 0);
    for (const writer of [
      CsvTableWriter.create(new CollectingSink(), RECORD_COLUMNS),
      ParquetTableWriter.create(new CollectingSink(), RECORD_COLUMNS),
    ]) {
      await expect(writer.writeChecked(checked)).rejects.toThrow("checked against another column list");
      await writer.writeChecked(checkValues(RECORD_COLUMNS, [good!], 0));
      expect(writer.rowsWritten).toBe(1);
    }
  });
});
