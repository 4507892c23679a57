import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MIN_PART_BYTES, MultipartSink } from "../../../src/lib/release/multipart-sink.ts";
import { MemoryBucket, sha256Hex } from "./support.ts";

const MiB = 1024 * 1024;

/** Writes `data` in chunks of uneven sizes, as the table writers hand them over. */
async function feed(sink: MultipartSink, data: Uint8Array, from = 0, to = data.length): Promise<void> {
  const sizes = [1, 300_000, 7, 2 * MiB + 3, 65_536];
  for (let at = from, i = 0; at < to; i++) {
    const end = Math.min(to, at + sizes[i % sizes.length]!);
    await sink.write(data.subarray(at, end));
    at = end;
  }
}

describe("MultipartSink", () => {
  it("uploads equal parts of the part size, a smaller last one, and reports the whole SHA-256", async () => {
    const bucket = new MemoryBucket();
    const data = randomBytes(3 * MIN_PART_BYTES + 12_345);
    const sink = MultipartSink.create(bucket, "releases/1.0/records.csv", { contentType: "text/csv" });
    await feed(sink, data);
    expect(sink.bytesWritten).toBe(data.length);
    const stored = await sink.close();
    expect(stored).toEqual({ key: "releases/1.0/records.csv", bytes: data.length, sha256: sha256Hex(data), parts: 4 });
    expect(bucket.log.filter((l) => l.startsWith("part"))).toEqual([
      `part releases/1.0/records.csv #1 ${MIN_PART_BYTES}`,
      `part releases/1.0/records.csv #2 ${MIN_PART_BYTES}`,
      `part releases/1.0/records.csv #3 ${MIN_PART_BYTES}`,
      "part releases/1.0/records.csv #4 12345",
    ]);
    const object = bucket.objects.get("releases/1.0/records.csv")!;
    expect(Buffer.from(object.bytes).equals(data)).toBe(true);
    expect(object.contentType).toBe("text/csv");
    await expect(sink.write(new Uint8Array(1))).rejects.toThrow("is complete");
  });

  it("takes a larger part size, and ends on a full part without an empty one", async () => {
    const bucket = new MemoryBucket();
    const data = randomBytes(2 * 6 * MiB);
    const sink = MultipartSink.create(bucket, "big.parquet", { partBytes: 6 * MiB });
    await feed(sink, data);
    expect(await sink.close()).toMatchObject({ bytes: data.length, sha256: sha256Hex(data), parts: 2 });
    expect(bucket.log.filter((l) => l.startsWith("part"))).toEqual([`part big.parquet #1 ${6 * MiB}`, `part big.parquet #2 ${6 * MiB}`]);
    expect(() => MultipartSink.create(bucket, "x", { partBytes: 4 * MiB })).toThrow("partBytes");
    expect(() => MultipartSink.create(bucket, "x", { partBytes: MIN_PART_BYTES + 1 })).toThrow("partBytes");
  });

  it("stores a file below one part with a single put, checked against its SHA-256", async () => {
    const bucket = new MemoryBucket();
    const data = randomBytes(MIN_PART_BYTES - 1);
    const sink = MultipartSink.create(bucket, "small.csv", { contentType: "text/csv" });
    await feed(sink, data);
    expect(await sink.close()).toEqual({ key: "small.csv", bytes: data.length, sha256: sha256Hex(data), parts: 0 });
    expect(bucket.log).toEqual([`put small.csv ${data.length}`]);
    const empty = MultipartSink.create(bucket, "empty.csv");
    expect(await empty.close()).toMatchObject({ bytes: 0, sha256: sha256Hex(new Uint8Array(0)), parts: 0 });
    expect(bucket.objects.get("empty.csv")!.bytes.length).toBe(0);
  });

  it("aborts the upload when a part fails, and refuses further writes", async () => {
    const bucket = new MemoryBucket();
    const sink = MultipartSink.create(bucket, "fails.csv");
    await sink.write(randomBytes(MIN_PART_BYTES));
    expect(bucket.uploads.size).toBe(1);
    bucket.failNext("part");
    await expect(sink.write(randomBytes(MIN_PART_BYTES))).rejects.toThrow("injected part failure");
    expect(bucket.log.at(-1)).toBe("abort fails.csv");
    expect(bucket.uploads.size).toBe(0);
    expect(bucket.objects.has("fails.csv")).toBe(false);
    await expect(sink.write(new Uint8Array(1))).rejects.toThrow("is aborted");
    await expect(sink.close()).rejects.toThrow("is aborted");
  });

  it("aborts when completing fails, and when asked to", async () => {
    const bucket = new MemoryBucket();
    const sink = MultipartSink.create(bucket, "late.csv");
    await sink.write(randomBytes(MIN_PART_BYTES + 10));
    bucket.failNext("complete");
    await expect(sink.close()).rejects.toThrow("injected complete failure");
    expect(bucket.log.at(-1)).toBe("abort late.csv");
    expect(bucket.objects.has("late.csv")).toBe(false);

    const other = MultipartSink.create(bucket, "given-up.csv");
    await other.write(randomBytes(MIN_PART_BYTES + 10));
    await other.abort();
    expect(bucket.uploads.size).toBe(0);
    expect(bucket.objects.has("given-up.csv")).toBe(false);
  });

  it("continues in another invocation from a checkpoint: same bytes, same SHA-256 (read back when parts were sent before), checkpoint removed", async () => {
    const data = randomBytes(2 * MIN_PART_BYTES + 777_777);
    for (const cut of [1_000, MIN_PART_BYTES, MIN_PART_BYTES + 4_321, 2 * MIN_PART_BYTES + 5]) {
      const bucket = new MemoryBucket();
      const first = MultipartSink.create(bucket, "records.csv", { checkpointKey: "staging/records.csv.tail", contentType: "text/csv" });
      await feed(first, data, 0, cut);
      const state = JSON.parse(JSON.stringify(await first.checkpoint()));
      const tail = cut % MIN_PART_BYTES;
      expect(state.tail === null ? 0 : state.tail.bytes).toBe(tail);
      expect(bucket.objects.has("staging/records.csv.tail")).toBe(tail > 0);
      // A later invocation: nothing but the bucket and the saved state.
      const second = await MultipartSink.resume(bucket, state);
      expect(second.bytesWritten).toBe(cut);
      await feed(second, data, cut);
      const stored = await second.close();
      expect(stored).toMatchObject({ bytes: data.length, sha256: sha256Hex(data), parts: 3 });
      // Parts uploaded by the first invocation: the SHA-256 is taken from the stored object.
      expect(bucket.log.includes("get records.csv")).toBe(cut >= MIN_PART_BYTES);
      expect(Buffer.from(bucket.objects.get("records.csv")!.bytes).equals(data)).toBe(true);
      expect(bucket.objects.get("records.csv")!.contentType).toBe("text/csv");
      expect(bucket.objects.has("staging/records.csv.tail")).toBe(false);
    }
  });

  it("refuses a checkpoint whose tail changed after the state was saved; discard cleans up", async () => {
    const bucket = new MemoryBucket();
    const data = randomBytes(MIN_PART_BYTES + 50_000);
    const sink = MultipartSink.create(bucket, "t.csv");
    await feed(sink, data, 0, MIN_PART_BYTES + 10_000);
    const saved = await sink.checkpoint();
    // The invocation went on and wrote a later checkpoint, then died before saving its state.
    await feed(sink, data, MIN_PART_BYTES + 10_000, MIN_PART_BYTES + 20_000);
    await sink.checkpoint();
    await expect(MultipartSink.resume(bucket, saved)).rejects.toThrow("missing or changed");
    await MultipartSink.discard(bucket, saved);
    expect(bucket.uploads.size).toBe(0);
    expect(bucket.objects.size).toBe(0);
    await expect(MultipartSink.resume(bucket, { ...saved, uploadId: null })).rejects.toThrow("inconsistent multipart sink state");
  });

  it("uploads again the parts a lost invocation sent after the saved state", async () => {
    const bucket = new MemoryBucket();
    const data = randomBytes(3 * MIN_PART_BYTES + 99);
    const first = MultipartSink.create(bucket, "p.parquet");
    await feed(first, data, 0, MIN_PART_BYTES + 100);
    const saved = JSON.parse(JSON.stringify(await first.checkpoint()));
    expect(saved.parts).toHaveLength(1);
    await feed(first, data, MIN_PART_BYTES + 100, 3 * MIN_PART_BYTES + 1); // parts 2 and 3 sent, state never saved
    const second = await MultipartSink.resume(bucket, saved);
    await feed(second, data, MIN_PART_BYTES + 100);
    expect(await second.close()).toMatchObject({ bytes: data.length, sha256: sha256Hex(data), parts: 4 });
    expect(bucket.log.filter((l) => l.startsWith("create"))).toHaveLength(1);
    expect(bucket.log.filter((l) => l.startsWith("part p.parquet #2"))).toHaveLength(2);
    expect(Buffer.from(bucket.objects.get("p.parquet")!.bytes).equals(data)).toBe(true);
    expect(bucket.uploads.size).toBe(0);
  });
});
