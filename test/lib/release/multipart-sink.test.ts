import { env } from "cloudflare:workers";
import { parquetReadObjects } from "hyparquet";
import { describe, expect, it } from "vitest";
import { toHex } from "../../../src/lib/encoding";
import type { Column, TableRow } from "../../../src/lib/release/columns";
import { CsvTableWriter } from "../../../src/lib/release/csv-table-writer";
import { MIN_PART_BYTES, MultipartSink, type ReleaseBucket } from "../../../src/lib/release/multipart-sink";
import { ParquetTableWriter } from "../../../src/lib/release/parquet-table-writer";

// The real local R2 binding: the type check proves env.UPLOADS is a ReleaseBucket as it is.
const bucket: ReleaseBucket = env.UPLOADS;

const COLUMNS: readonly Column[] = [
  { name: "id", type: "int64", nullable: false },
  { name: "name", type: "string", nullable: false },
  { name: "weight_g", type: "double" },
  { name: "created_at", type: "datetime", nullable: false },
];

function rows(from: number, to: number): TableRow[] {
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    return {
      id: i + 1,
      name: `Gerät ${i} – ${"abcdefghij".repeat(i % 9)}`,
      weight_g: i % 7 === 0 ? null : i / 4,
      created_at: 1_767_225_600 + i,
    };
  });
}

async function sha256Of(bytes: ArrayBuffer): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

describe("MultipartSink on R2", () => {
  it("writes a CSV of several parts across a checkpoint, and R2 serves exactly those bytes", async () => {
    const key = "releases/test-1/records.csv";
    const options = { contentType: "text/csv", checkpointKey: "release-staging/test-1/records.csv.tail" };
    const first = MultipartSink.create(bucket, key, options);
    const firstWriter = CsvTableWriter.create(first, COLUMNS);
    for (let at = 0; at < 60_000; at += 5_000) await firstWriter.write(rows(at, at + 5_000));
    // The invocation ends here; the next one has only the saved states and the bucket.
    const saved = JSON.parse(JSON.stringify({ sink: await first.checkpoint(), csv: firstWriter.state() }));
    expect(saved.sink.parts.length).toBeGreaterThanOrEqual(1);
    expect(await env.UPLOADS.head(options.checkpointKey)).not.toBeNull();

    const second = await MultipartSink.resume(bucket, saved.sink);
    const secondWriter = CsvTableWriter.resume(second, COLUMNS, saved.csv);
    for (let at = 60_000; at < 150_000; at += 5_000) await secondWriter.write(rows(at, at + 5_000));
    await secondWriter.finish();
    const stored = await second.close();

    expect(stored.parts).toBe(Math.ceil(stored.bytes / MIN_PART_BYTES));
    expect(stored.parts).toBeGreaterThanOrEqual(3);
    const object = await env.UPLOADS.get(key);
    expect(object).not.toBeNull();
    expect(object!.size).toBe(stored.bytes);
    expect(object!.httpMetadata?.contentType).toBe("text/csv");
    const body = await object!.arrayBuffer();
    expect(await sha256Of(body)).toBe(stored.sha256);
    const lines = new TextDecoder().decode(body).split("\r\n");
    expect(lines[0]).toBe("id,name,weight_g,created_at");
    expect(lines).toHaveLength(150_002); // header, rows, and the empty string after the last CRLF
    expect(lines[150_000]).toMatch(/^150000,Gerät 149999 – /);
    expect(await env.UPLOADS.head(options.checkpointKey)).toBeNull();
  }, 60_000);

  it("hashes several parts written in one invocation with the runtime's digest, as R2 stores them", async () => {
    expect(typeof (crypto as unknown as { DigestStream?: unknown }).DigestStream).toBe("function");
    const key = "releases/test-1/one-go.bin";
    const sink = MultipartSink.create(bucket, key);
    // Bytes that differ from part to part, in uneven writes.
    const chunk = new Uint8Array(1_234_567);
    let written = 0;
    for (let i = 0; written < 2 * MIN_PART_BYTES + 99; i++) {
      chunk.fill(i * 37);
      const piece = chunk.subarray(0, Math.min(chunk.length - (i % 5) * 1_000, 2 * MIN_PART_BYTES + 99 - written));
      await sink.write(piece);
      written += piece.length;
    }
    const stored = await sink.close();
    expect(stored).toMatchObject({ bytes: written, parts: 3 });
    const object = await env.UPLOADS.get(key);
    expect(await sha256Of(await object!.arrayBuffer())).toBe(stored.sha256);
  }, 60_000);

  it("stores a small Parquet file with one put that R2 checks, readable by hyparquet", async () => {
    const key = "releases/test-1/records.parquet";
    const sink = MultipartSink.create(bucket, key, { contentType: "application/vnd.apache.parquet" });
    const writer = ParquetTableWriter.create(sink, COLUMNS, { rowGroupRows: 1_000 });
    await writer.write(rows(0, 2_500));
    expect(await writer.finish()).toMatchObject({ rows: 2_500, rowGroups: 3 });
    const stored = await sink.close();
    expect(stored.parts).toBe(0);
    const body = await (await env.UPLOADS.get(key))!.arrayBuffer();
    expect(await sha256Of(body)).toBe(stored.sha256);
    const back = await parquetReadObjects({ file: body });
    expect(back).toHaveLength(2_500);
    expect(back[2_498]).toMatchObject({ id: 2_499n, weight_g: 2_498 / 4 });
    expect(back[2_499]).toMatchObject({ id: 2_500n, weight_g: null });
    expect((back[0]!.created_at as Date).toISOString()).toBe("2026-01-01T00:00:00.000Z");
  });

  it("aborts: the upload is gone and no object is left", async () => {
    const key = "releases/test-1/aborted.csv";
    const sink = MultipartSink.create(bucket, key);
    await sink.write(new Uint8Array(MIN_PART_BYTES + 1).fill(65));
    const { uploadId } = await sink.checkpoint();
    expect(uploadId).not.toBeNull();
    await sink.abort();
    await expect(env.UPLOADS.resumeMultipartUpload(key, uploadId!).uploadPart(2, new Uint8Array(10))).rejects.toThrow();
    expect(await env.UPLOADS.head(key)).toBeNull();
    expect(await env.UPLOADS.head(`${key}.checkpoint`)).toBeNull();
  });
});
