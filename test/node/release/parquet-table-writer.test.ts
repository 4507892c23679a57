import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { beforeAll, describe, expect, it } from "vitest";
import type { Column } from "../../../src/lib/release/columns.ts";
import { CsvTableWriter } from "../../../src/lib/release/csv-table-writer.ts";
import { MultipartSink, type StoredFile } from "../../../src/lib/release/multipart-sink.ts";
import { ParquetTableWriter } from "../../../src/lib/release/parquet-table-writer.ts";
import { toTaggedJson } from "../../../src/lib/release/tagged-json.ts";
import { batches, CollectingSink, MemoryBucket, parseCsv, RECORD_COLUMNS, recordRows, sha256Hex } from "./support.ts";

// Enough rows for the Parquet file to pass R2's 5 MiB part size (about 84 bytes a row): both files
// span parts, and the last row group is a short one.
const ROWS = 72_000;
const BATCH = 1_000;

type ParquetRow = Record<string, unknown>;

const arrayBuffer = (bytes: Uint8Array) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

/** A Parquet value as the CSV should show it (this test's own reading of the format rules). */
function asCsvText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (value instanceof Date) return value.toISOString().replace(".000Z", "Z");
  if (typeof value === "string") return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return String(value);
}

describe("ParquetTableWriter, 72,000 rows next to the CSV, through the multipart sink", () => {
  const bucket = new MemoryBucket();
  let csv: StoredFile;
  let parquet: StoredFile;
  let rows: ParquetRow[];
  let csvRows: string[][];
  let parquetBytes: Uint8Array;
  let parquetSummary: { rows: number; rowGroups: number; bytes: number };

  beforeAll(async () => {
    const csvSink = MultipartSink.create(bucket, "releases/9.9/records.csv", { contentType: "text/csv" });
    const parquetSink = MultipartSink.create(bucket, "releases/9.9/records.parquet");
    const csvWriter = CsvTableWriter.create(csvSink, RECORD_COLUMNS);
    const parquetWriter = ParquetTableWriter.create(parquetSink, RECORD_COLUMNS);
    for (const batch of batches(recordRows(ROWS), BATCH)) {
      await csvWriter.write(batch);
      await parquetWriter.write(batch);
    }
    await csvWriter.finish();
    parquetSummary = await parquetWriter.finish();
    csv = await csvSink.close();
    parquet = await parquetSink.close();
    parquetBytes = bucket.objects.get(parquet.key)!.bytes;
    rows = await parquetReadObjects({ file: arrayBuffer(parquetBytes) });
    csvRows = parseCsv(new TextDecoder().decode(bucket.objects.get(csv.key)!.bytes));
  }, 120_000);

  it("stores both files as multipart objects whose size and SHA-256 the sink reported", () => {
    for (const file of [csv, parquet]) {
      const stored = bucket.objects.get(file.key)!.bytes;
      expect(file.bytes).toBe(stored.length);
      expect(file.sha256).toBe(sha256Hex(stored));
      expect(file.parts).toBe(Math.ceil(stored.length / (5 * 1024 * 1024)));
      expect(file.parts).toBeGreaterThanOrEqual(2);
    }
    expect(parquetSummary).toEqual({ rows: ROWS, rowGroups: 4, bytes: parquet.bytes });
  });

  it("has the row count, bounded row groups, and the schema pandas, Polars and DuckDB read as typed", () => {
    const meta = parquetMetadata(arrayBuffer(parquetBytes));
    expect(meta.num_rows).toBe(BigInt(ROWS));
    expect(rows).toHaveLength(ROWS);
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([20_000, 20_000, 20_000, 12_000]);
    const leaves = meta.schema.slice(1).map((e) => ({
      name: e.name,
      type: e.type,
      repetition: e.repetition_type,
      logical: e.logical_type,
    }));
    const utf8 = { type: "BYTE_ARRAY", logical: { type: "STRING" } };
    const timestamp = { type: "INT64", logical: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" } };
    expect(leaves).toEqual([
      { name: "id", type: "INT64", repetition: "REQUIRED", logical: undefined },
      { name: "parent_id", type: "INT64", repetition: "OPTIONAL", logical: undefined },
      { name: "amount_in_parent", type: "INT32", repetition: "OPTIONAL", logical: undefined },
      { name: "owner_pseudonym", ...utf8, repetition: "REQUIRED" },
      { name: "name", ...utf8, repetition: "REQUIRED" },
      { name: "description", ...utf8, repetition: "OPTIONAL" },
      { name: "weight_g", type: "DOUBLE", repetition: "OPTIONAL", logical: undefined },
      { name: "volume_cm3", type: "DOUBLE", repetition: "OPTIONAL", logical: undefined },
      { name: "is_reference", type: "BOOLEAN", repetition: "OPTIONAL", logical: undefined },
      { name: "circularity_properties", ...utf8, repetition: "OPTIONAL" },
      { name: "created_at", ...timestamp, repetition: "REQUIRED" },
      { name: "updated_at", ...timestamp, repetition: "OPTIONAL" },
    ]);
    const codecs = new Set(meta.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec)));
    expect([...codecs]).toEqual(["SNAPPY"]);
  });

  it("holds the source values exactly: nulls, unicode, JSON text, times", () => {
    const source = [...recordRows(ROWS)];
    for (const i of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 4_999, 67_777, ROWS - 1]) {
      const want = source[i]!;
      const got = rows[i]!;
      expect(got.id).toBe(BigInt(want.id as number));
      expect(got.parent_id).toBe(want.parent_id === null ? null : BigInt(want.parent_id as number));
      expect(got.amount_in_parent).toBe(want.amount_in_parent);
      expect(got.name).toBe(want.name);
      expect(got.description).toBe(want.description);
      expect(got.weight_g).toBe(want.weight_g);
      expect(got.volume_cm3).toBe(want.volume_cm3);
      expect(got.is_reference).toBe(want.is_reference === null ? null : want.is_reference === 1 || want.is_reference === true);
      expect(got.circularity_properties).toBe(want.circularity_properties === null ? null : JSON.stringify(want.circularity_properties));
      expect((got.created_at as Date).getTime()).toBe((want.created_at as number) * 1000);
      expect(got.updated_at === null ? null : (got.updated_at as Date).getTime()).toBe(
        want.updated_at === null ? null : (want.updated_at as Date).getTime(),
      );
    }
    const names = new Set(rows.slice(0, 16).map((r) => (r.name as string).replace(/ #\d+$/, "")));
    expect(names).toContain("e\u0301cran 👩‍🔬");
    expect(names).toContain("咖啡机");
    expect(rows[14]!.description).toMatch(/^two\r\nlines /);
    expect(rows[0]!.description).toBeNull();
    expect(rows[9]!.description).toMatch(/^=SUM\(A1:A9\) /); // no formula guard in Parquet
  });

  it("matches the CSV cell for cell (header, nulls as empty cells, the guard only in CSV)", () => {
    expect(csvRows[0]).toEqual(RECORD_COLUMNS.map((c) => c.name));
    expect(csvRows).toHaveLength(ROWS + 1);
    const names = RECORD_COLUMNS.map((c) => c.name);
    for (let i = 0; i < ROWS; i++) {
      const expected = names.map((n) => asCsvText(rows[i]![n]));
      if (expected.join("\u0000") !== csvRows[i + 1]!.join("\u0000")) {
        expect({ row: i, cells: csvRows[i + 1] }).toEqual({ row: i, cells: expected });
      }
    }
  });

  it("has the CSV's column sums and null counts", () => {
    const numeric = ["id", "parent_id", "amount_in_parent", "weight_g", "volume_cm3"];
    for (const name of numeric) {
      const c = RECORD_COLUMNS.findIndex((col) => col.name === name);
      let csvSum = 0;
      let csvNulls = 0;
      for (const row of csvRows.slice(1)) {
        if (row[c] === "") csvNulls++;
        else csvSum += Number(row[c]);
      }
      let parquetSum = 0;
      let parquetNulls = 0;
      for (const row of rows) {
        const v = row[name];
        if (v === null) parquetNulls++;
        else parquetSum += Number(v);
      }
      expect({ name, sum: parquetSum, nulls: parquetNulls }).toEqual({ name, sum: csvSum, nulls: csvNulls });
      expect(csvSum).toBeGreaterThan(0);
    }
    const trues = (values: unknown[]) => values.filter((v) => v === true || v === "true").length;
    const flag = RECORD_COLUMNS.findIndex((col) => col.name === "is_reference");
    expect(trues(rows.map((r) => r.is_reference))).toBe(trues(csvRows.slice(1).map((r) => r[flag])));
    expect(csvRows.slice(1).filter((r) => r[5] === "").length).toBe(rows.filter((r) => r.description === null).length);
  });
});

describe("ParquetTableWriter", () => {
  it("cuts a row group early when its cells pass the byte bound", async () => {
    const sink = new CollectingSink();
    const writer = ParquetTableWriter.create(sink, RECORD_COLUMNS, { rowGroupRows: 50_000, rowGroupBytes: 256 * 1024 });
    for (const batch of batches(recordRows(10_000), 2_500)) await writer.write(batch);
    const { rowGroups } = await writer.finish();
    const meta = parquetMetadata(arrayBuffer(sink.bytes()));
    expect(rowGroups).toBe(meta.row_groups.length);
    expect(rowGroups).toBeGreaterThan(4);
    expect(meta.row_groups.reduce((n, g) => n + Number(g.num_rows), 0)).toBe(10_000);
  });

  // 30,000 rows written twice: seconds of CPU, more on a loaded machine than the default 5 s allows.
  it("continues a file from a checkpoint in another invocation, byte for byte", async () => {
    const source = [...recordRows(30_000, 7)];
    const options = { rowGroupRows: 4_000 };
    // Uninterrupted, with the same checkpoint (it ends a row group early).
    const whole = new CollectingSink();
    const a = ParquetTableWriter.create(whole, RECORD_COLUMNS, options);
    await a.write(source.slice(0, 13_500));
    await a.checkpoint();
    await a.write(source.slice(13_500));
    await a.finish();
    // Interrupted: the state goes through JSON, a new writer picks it up.
    const bucket = new MemoryBucket();
    const firstSink = MultipartSink.create(bucket, "r.parquet");
    const first = ParquetTableWriter.create(firstSink, RECORD_COLUMNS, options);
    await first.write(source.slice(0, 13_500));
    const saved = JSON.parse(JSON.stringify({ parquet: await first.checkpoint(), sink: await firstSink.checkpoint() }));
    expect(saved.parquet.bytes).toBe(firstSink.bytesWritten);
    const secondSink = await MultipartSink.resume(bucket, saved.sink);
    const second = ParquetTableWriter.resume(secondSink, RECORD_COLUMNS, saved.parquet, options);
    expect(second.rowsWritten).toBe(13_500);
    await second.write(source.slice(13_500));
    expect(await second.finish()).toMatchObject({ rows: 30_000, rowGroups: 9 });
    const stored = await secondSink.close();
    expect(stored.sha256).toBe(sha256Hex(whole.bytes()));
    const back = await parquetReadObjects({ file: arrayBuffer(bucket.objects.get("r.parquet")!.bytes) });
    expect(back).toHaveLength(30_000);
    expect(back[29_999]!.id).toBe(30_000n);
    const otherColumns = RECORD_COLUMNS.map((c) => (c.name === "weight_g" ? { ...c, type: "int32" as const } : c));
    expect(() => ParquetTableWriter.resume(new CollectingSink(), otherColumns, saved.parquet)).toThrow("other columns");
  }, 30_000);

  it("writes a valid file for a table without rows", async () => {
    const sink = new CollectingSink();
    expect(await ParquetTableWriter.create(sink, RECORD_COLUMNS).finish()).toMatchObject({ rows: 0, rowGroups: 0 });
    const meta = parquetMetadata(arrayBuffer(sink.bytes()));
    expect(meta.num_rows).toBe(0n);
    expect(meta.schema).toHaveLength(RECORD_COLUMNS.length + 1);
    expect(await parquetReadObjects({ file: arrayBuffer(sink.bytes()) })).toEqual([]);
  });

  it("refuses rows that do not fit, and writing after the end", async () => {
    const writer = ParquetTableWriter.create(new CollectingSink(), RECORD_COLUMNS);
    const [row] = [...recordRows(1)];
    await expect(writer.write([{ ...row, id: "1" }])).rejects.toThrow('column "id", row 0: expected a safe integer');
    expect(writer.rowsWritten).toBe(0);
    await writer.finish();
    await expect(writer.write([row!])).rejects.toThrow("already finished");
  });

  it("keeps state in JSON without losing what JSON cannot carry", () => {
    expect(toTaggedJson({ a: 1n, b: new Uint8Array([1, 2]), c: [2n] })).toBe(
      '{"a":{"$bigint":"1"},"b":{"$bytes":"AQI"},"c":[{"$bigint":"2"}]}',
    );
    expect(() => toTaggedJson({ d: new Date(0) })).toThrow("cannot carry");
    expect(() => toTaggedJson({ f: new Float64Array(1) })).toThrow("cannot carry");
  });
});

describe("ParquetTableWriter's statistics", () => {
  it("give each row group's min, max and null count of every column, as the writer's own would", async () => {
    const columns: readonly Column[] = [
      { name: "id", type: "int64", nullable: false },
      { name: "small", type: "int32" },
      { name: "x", type: "double" },
      { name: "flag", type: "boolean" },
      { name: "at", type: "datetime" },
      { name: "label", type: "string" },
      { name: "empty", type: "double" },
    ];
    // Three row groups of 40 rows: zeros (the bounds of a zero are -0 and +0), negatives, nulls, a column of nulls only.
    const rows = Array.from({ length: 120 }, (_, i) => ({
      id: 1000 - i * 7,
      small: i % 5 === 0 ? null : ((i * 37) % 23) - 11,
      x: i % 4 === 0 ? null : i % 40 === 1 ? 0 : ((i * 1.25) % 9) - 4.5,
      flag: i % 3 === 0 ? null : i % 80 < 40,
      at: i % 6 === 0 ? null : 1_700_000_000 + ((i * 7919) % 1000),
      label: i % 7 === 0 ? null : `label ${(i * 13) % 50}`,
      empty: null,
    }));
    const sink = new CollectingSink();
    const writer = ParquetTableWriter.create(sink, columns, { rowGroupRows: 40 });
    await writer.write(rows);
    await writer.finish();
    const meta = parquetMetadata(arrayBuffer(sink.bytes()));
    expect(meta.row_groups).toHaveLength(3);
    meta.row_groups.forEach((group, g) => {
      const slice = rows.slice(g * 40, g * 40 + 40);
      columns.forEach((column, c) => {
        const stats = group.columns[c]!.meta_data!.statistics!;
        const values = slice.map((row) => row[column.name as keyof typeof row]).filter((v) => v !== null) as (number | boolean | string)[];
        expect(stats.null_count, column.name).toBe(BigInt(40 - values.length));
        const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const asRead = (v: unknown) => (v instanceof Date ? v.getTime() / 1000 : typeof v === "bigint" ? Number(v) : v);
        expect(asRead(stats.min_value), `${column.name} min`).toBe(sorted[0]);
        expect(asRead(stats.max_value), `${column.name} max`).toBe(sorted.at(-1));
        expect(group.columns[c]!.meta_data!.encoding_stats?.at(-1)).toMatchObject({ page_type: "DATA_PAGE_V2", count: 1 });
      });
    });
  });
});
