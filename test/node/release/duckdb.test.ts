import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CsvTableWriter } from "../../../src/lib/release/csv-table-writer.ts";
import { ParquetTableWriter } from "../../../src/lib/release/parquet-table-writer.ts";
import { batches, CollectingSink, RECORD_COLUMNS, recordRows } from "./support.ts";

// DuckDB (native, its own Parquet and CSV readers) as the independent reader of both files.
// Past DuckDB's CSV sniffing sample (20,480 rows) and over two row groups (20,000 and 4,000).
const ROWS = 24_000;
const dir = mkdtempSync(path.join(os.tmpdir(), "release-duckdb-"));
const file = (name: string) => path.join(dir, name).replaceAll("'", "''");

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(":memory:");
  const connection = await db.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
  }
}

// Doubles are summed as decimals: DuckDB adds floats in parallel, in no fixed order.
const SUMMARY = `count(*) AS rows, sum(id) AS id, sum(parent_id) AS parent_id, sum(amount_in_parent) AS amount,
  sum(weight_g::DECIMAL(38, 6))::VARCHAR AS weight_g, sum(volume_cm3::DECIMAL(38, 9))::VARCHAR AS volume_cm3, count(description) AS descriptions,
  count(*) FILTER (WHERE is_reference) AS reference, count(updated_at) AS updated,
  sum(epoch(created_at)) AS created_seconds, max(updated_at)::VARCHAR AS last_update,
  count(*) FILTER (WHERE name LIKE '咖啡机%') AS coffee`;

describe("DuckDB reads the release files", () => {
  beforeAll(async () => {
    const csv = new CollectingSink();
    const parquet = new CollectingSink();
    const csvWriter = CsvTableWriter.create(csv, RECORD_COLUMNS);
    const parquetWriter = ParquetTableWriter.create(parquet, RECORD_COLUMNS);
    for (const batch of batches(recordRows(ROWS), 2_000)) {
      await csvWriter.write(batch);
      await parquetWriter.write(batch);
    }
    await csvWriter.finish();
    await parquetWriter.finish();
    writeFileSync(path.join(dir, "records.csv"), csv.bytes());
    writeFileSync(path.join(dir, "records.parquet"), parquet.bytes());
    const empty = new CollectingSink();
    await ParquetTableWriter.create(empty, RECORD_COLUMNS).finish();
    writeFileSync(path.join(dir, "empty.parquet"), empty.bytes());
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("types the Parquet columns: integers, doubles, booleans, text, UTC timestamps", async () => {
    const columns = await query(`DESCRIBE SELECT * FROM '${file("records.parquet")}'`);
    expect(columns.map((c) => `${c.column_name} ${c.column_type}`)).toEqual([
      "id BIGINT",
      "parent_id BIGINT",
      "amount_in_parent INTEGER",
      "owner_pseudonym VARCHAR",
      "name VARCHAR",
      "description VARCHAR",
      "weight_g DOUBLE",
      "volume_cm3 DOUBLE",
      "is_reference BOOLEAN",
      "circularity_properties VARCHAR",
      "created_at TIMESTAMP WITH TIME ZONE",
      "updated_at TIMESTAMP WITH TIME ZONE",
    ]);
  });

  it("counts and sums the Parquet file as it does the CSV file", async () => {
    const [fromParquet] = await query(`SET TimeZone = 'UTC'; SELECT ${SUMMARY} FROM '${file("records.parquet")}'`);
    const [fromCsv] = await query(`SET TimeZone = 'UTC'; SELECT ${SUMMARY} FROM read_csv('${file("records.csv")}', header = true)`);
    expect(fromParquet).toEqual(fromCsv);
    expect(fromParquet).toMatchObject({ rows: String(ROWS), id: String((ROWS * (ROWS + 1)) / 2), coffee: String(ROWS / 8) });
    expect(Number(fromParquet!.descriptions)).toBe(ROWS - ROWS / 5);
  });

  it("reads the JSON column as JSON and an empty table as no rows", async () => {
    const [json] = await query(
      `SELECT count(*) FILTER (WHERE circularity_properties::JSON->>'recyclability' = 'grade 1') AS grade1 FROM '${file("records.parquet")}'`,
    );
    expect(Number(json!.grade1)).toBeGreaterThan(0);
    const [empty] = await query(`SELECT count(*) AS n FROM '${file("empty.parquet")}'`);
    expect(empty).toEqual({ n: "0" });
  });
});
