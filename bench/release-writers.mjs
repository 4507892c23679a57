// Speed and memory of the dataset-release writers (src/lib/release) in Node: rows of the records
// table's shape (test/node/release/support.ts) written as CSV and as Parquet, straight into a
// counter or through the multipart sink (SHA-256 included) with a bucket that discards parts.
//
//   node bench/release-writers.mjs [--rows 30000,120000] [--batch 1000] [--json]
//
// The library is bundled with esbuild; every case runs twice in a fresh `node --expose-gc`
// process: once timed (no forced GC), once for memory: after every 10 batches a forced GC, and
// reported is the most memory (heapUsed + arrayBuffers) held above the baseline taken before the
// writers were made ("retained"), and the most seen without forcing a GC ("peak", garbage
// included). `gen` times the row generator alone, the floor under every other figure.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const ROOT = path.resolve(import.meta.dirname, "..");
const MB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "30000,120000" },
    batch: { type: "string", default: "1000" },
    json: { type: "boolean", default: false },
  },
});

const ENTRY = `
export { CsvTableWriter } from ${JSON.stringify(path.join(ROOT, "src/lib/release/csv-table-writer.ts"))};
export { ParquetTableWriter } from ${JSON.stringify(path.join(ROOT, "src/lib/release/parquet-table-writer.ts"))};
export { MultipartSink } from ${JSON.stringify(path.join(ROOT, "src/lib/release/multipart-sink.ts"))};
export { batches, CountingSink, RECORD_COLUMNS, recordRows } from ${JSON.stringify(path.join(ROOT, "test/node/release/support.ts"))};
`;

const RUNNER = `
import { createHash } from "node:crypto";
import * as lib from "./lib.mjs";
const [mode, rowsArg, batchArg, measure] = process.argv.slice(2);
const rows = Number(rowsArg), batchSize = Number(batchArg), memory = measure === "memory";
const used = () => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
const discarding = {
  async put(_k, v) { return { size: v.length }; }, async get() { return null; }, async delete() {},
  async createMultipartUpload() { return this.resumeMultipartUpload(); },
  resumeMultipartUpload() {
    let size = 0;
    return { uploadId: "x", abort: async () => {}, complete: async () => ({ size }),
      uploadPart: async (partNumber, v) => { size += v.length; return { partNumber, etag: createHash("md5").update(v).digest("hex") }; } };
  },
};
const [format, via] = mode.split("+");
global.gc();
const base = used();
let peak = 0, retained = 0, n = 0;
const sink = via === "sink" ? lib.MultipartSink.create(discarding, "f") : new lib.CountingSink();
const writer = format === "csv" ? lib.CsvTableWriter.create(sink, lib.RECORD_COLUMNS)
  : format === "parquet" ? lib.ParquetTableWriter.create(sink, lib.RECORD_COLUMNS) : null;
const started = performance.now();
for (const batch of lib.batches(lib.recordRows(rows), batchSize)) {
  if (writer) await writer.write(batch);
  if (memory) {
    peak = Math.max(peak, used() - base);
    if (++n % 10 === 0) { global.gc(); retained = Math.max(retained, used() - base); }
  }
}
if (writer) await writer.finish();
const stored = via === "sink" ? await sink.close() : { bytes: sink.bytes };
const seconds = (performance.now() - started) / 1000;
console.log(JSON.stringify({ seconds, bytes: stored.bytes ?? 0, peak, retained }));
`;

const dir = mkdtempSync(path.join(os.tmpdir(), "release-bench-"));
try {
  await build({
    stdin: { contents: ENTRY, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: path.join(dir, "lib.mjs"),
    logLevel: "error",
  });
  writeFileSync(path.join(dir, "run.mjs"), RUNNER);
  const run = (mode, rows, measure) => {
    const child = spawnSync(process.execPath, ["--expose-gc", path.join(dir, "run.mjs"), mode, String(rows), values.batch, measure], {
      encoding: "utf8",
    });
    if (child.status !== 0) throw new Error(`${mode} ${rows}: ${child.stderr}`);
    return JSON.parse(child.stdout.trim().split("\n").at(-1));
  };
  const results = [];
  for (const rows of values.rows.split(",").map(Number)) {
    for (const mode of ["gen", "csv", "parquet", "csv+sink", "parquet+sink"]) {
      const time = run(mode, rows, "time");
      const memory = run(mode, rows, "memory");
      results.push({
        mode,
        rows,
        rowsPerSecond: Math.round(rows / time.seconds),
        seconds: time.seconds,
        bytes: time.bytes,
        peak: memory.peak,
        retained: memory.retained,
      });
    }
  }
  if (values.json) console.log(JSON.stringify(results, null, 2));
  else {
    console.log(`node ${process.version}, batches of ${values.batch} rows`);
    console.log("| case | rows | rows/s | time | size | peak above start | retained (after GC) |\n|---|---:|---:|---:|---:|---:|---:|");
    for (const r of results) {
      console.log(
        `| ${r.mode} | ${r.rows.toLocaleString("en-US")} | ${r.rowsPerSecond.toLocaleString("en-US")} | ${r.seconds.toFixed(2)} s | ${(r.bytes / MB).toFixed(1)} MiB | ${(r.peak / MB).toFixed(1)} MB | ${(r.retained / MB).toFixed(1)} MB |`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
