import { createHash } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { CsvTableWriter } from "../../../src/lib/release/csv-table-writer.ts";
import { MultipartSink, type ReleaseBucket } from "../../../src/lib/release/multipart-sink.ts";
import { ParquetTableWriter } from "../../../src/lib/release/parquet-table-writer.ts";
import { batches, CountingSink, RECORD_COLUMNS, recordRows } from "./support.ts";

// A full GC on demand, so that what is measured is the memory the writers hold, not garbage
// that has not been collected yet.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const used = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
const MB = 1024 * 1024;

/** R2's part of the job without keeping the bytes: a growing store would hide the writers. */
class DiscardingBucket implements ReleaseBucket {
  bytes = 0;
  async put(_key: string, value: Uint8Array) {
    this.bytes += value.length;
    return { size: value.length };
  }
  async get() {
    return null;
  }
  async delete() {}
  async createMultipartUpload() {
    return this.resumeMultipartUpload();
  }
  resumeMultipartUpload() {
    let size = 0;
    return {
      uploadId: "discarding",
      uploadPart: async (partNumber: number, value: Uint8Array) => {
        size += value.length;
        this.bytes += value.length;
        return { partNumber, etag: createHash("md5").update(value).digest("hex") };
      },
      complete: async () => ({ size }),
      abort: async () => {},
    };
  }
}

/**
 * Writes `count` rows as CSV and Parquet at once, into multipart sinks or (`direct`) straight
 * into counters; the most memory held, sampled after every 5 batches.
 */
async function writeBoth(count: number, direct = false): Promise<{ retained: number; bytes: number }> {
  gc();
  const base = used();
  const bucket = new DiscardingBucket();
  const csvSink = direct ? new CountingSink() : MultipartSink.create(bucket, "records.csv");
  const parquetSink = direct ? new CountingSink() : MultipartSink.create(bucket, "records.parquet");
  const csv = CsvTableWriter.create(csvSink, RECORD_COLUMNS);
  const parquet = ParquetTableWriter.create(parquetSink, RECORD_COLUMNS);
  let retained = 0;
  let n = 0;
  for (const batch of batches(recordRows(count), 1_000)) {
    await csv.write(batch);
    await parquet.write(batch);
    if (++n % 5 === 0) {
      gc();
      retained = Math.max(retained, used() - base);
    }
  }
  await csv.finish();
  await parquet.finish();
  if (csvSink instanceof MultipartSink) await csvSink.close();
  if (parquetSink instanceof MultipartSink) await parquetSink.close();
  return {
    retained,
    bytes:
      bucket.bytes + (csvSink instanceof CountingSink ? csvSink.bytes : 0) + (parquetSink instanceof CountingSink ? parquetSink.bytes : 0),
  };
}

describe("memory of a release table", () => {
  it("stays flat: the writers hold no more for 120,000 rows than for 30,000", async () => {
    await writeBoth(5_000, true); // warm up: compiled code and lazily built tables are not the writers' data
    const small = await writeBoth(30_000, true);
    const large = await writeBoth(120_000, true);
    expect(large.bytes).toBeGreaterThan(3.5 * small.bytes);
    // Measured here: 5-7 MB held for 30,000 rows, 6-8.5 MB for 60,000 to 240,000 (the spread is
    // the collector's). Growth in proportion would hold four times as much, 15 MB more or worse.
    expect(large.retained - small.retained).toBeLessThan(6 * MB);
    expect(large.retained).toBeLessThan(16 * MB);
  }, 120_000);

  it("holds one row group and one part per file through the multipart sinks", async () => {
    const { retained, bytes } = await writeBoth(120_000);
    expect(bytes).toBeGreaterThan(4 * 5 * MB);
    // Two part buffers of 5 MiB, one Parquet row group being collected, the CSV's pending text.
    expect(retained).toBeLessThan(32 * MB);
  }, 120_000);
});
