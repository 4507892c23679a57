import { createHash } from "node:crypto";
import type { ByteSink } from "../../../src/lib/release/byte-sink.ts";
import type { Column, TableRow } from "../../../src/lib/release/columns.ts";
import { MIN_PART_BYTES, type ReleaseBucket, type ReleaseUpload } from "../../../src/lib/release/multipart-sink.ts";

/** Keeps every byte it is given (copied: the writers lend their buffers). */
export class CollectingSink implements ByteSink {
  private chunks: Uint8Array[] = [];
  writes = 0;
  async write(chunk: Uint8Array): Promise<void> {
    this.writes += 1;
    this.chunks.push(chunk.slice());
  }
  bytes(): Uint8Array {
    return Buffer.concat(this.chunks);
  }
}

/** Counts bytes and hashes them, keeping nothing: for memory measurements. */
export class CountingSink implements ByteSink {
  bytes = 0;
  private hash = createHash("sha256");
  async write(chunk: Uint8Array): Promise<void> {
    this.bytes += chunk.length;
    this.hash.update(chunk);
  }
  digest(): string {
    return this.hash.digest("hex");
  }
}

export type BucketOp = "put" | "get" | "delete" | "create" | "part" | "complete" | "abort";

interface PendingUpload {
  key: string;
  contentType?: string;
  parts: Map<number, { bytes: Uint8Array; etag: string }>;
}

/**
 * An in-memory bucket with R2's multipart rules: parts numbered 1..10,000; on completion every
 * listed part must exist with its etag, every part but the last must be at least 5 MiB and all
 * of the same size, the last no larger; a put with `sha256` is checked. `failNext` makes the
 * next call of one kind fail, as a storage outage would.
 */
export class MemoryBucket implements ReleaseBucket {
  readonly objects = new Map<string, { bytes: Uint8Array; contentType?: string }>();
  readonly uploads = new Map<string, PendingUpload>();
  readonly log: string[] = [];
  private failures = new Set<BucketOp>();
  private nextId = 1;

  failNext(op: BucketOp): void {
    this.failures.add(op);
  }

  private step(op: BucketOp, detail: string): void {
    this.log.push(`${op} ${detail}`);
    if (this.failures.delete(op)) throw new Error(`injected ${op} failure`);
  }

  async put(key: string, value: Uint8Array, options?: R2PutOptions): Promise<{ size: number }> {
    this.step("put", `${key} ${value.length}`);
    if (typeof options?.sha256 === "string" && options.sha256 !== sha256Hex(value)) {
      throw new Error("put: SHA-256 does not match the body");
    }
    const contentType = (options?.httpMetadata as R2HTTPMetadata | undefined)?.contentType;
    this.objects.set(key, { bytes: value.slice(), ...(contentType ? { contentType } : {}) });
    return { size: value.length };
  }

  async get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer>; body: ReadableStream<Uint8Array> } | null> {
    this.step("get", key);
    const object = this.objects.get(key);
    if (!object) return null;
    // The body in pieces of 1 MiB, as a stream from storage comes.
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= object.bytes.length) return controller.close();
        controller.enqueue(object.bytes.slice(offset, offset + 1024 * 1024));
        offset += 1024 * 1024;
      },
    });
    return { arrayBuffer: async () => object.bytes.slice().buffer, body };
  }

  async delete(key: string): Promise<void> {
    this.step("delete", key);
    this.objects.delete(key);
  }

  async createMultipartUpload(key: string, options?: R2MultipartOptions): Promise<ReleaseUpload> {
    this.step("create", key);
    const uploadId = `upload-${this.nextId++}`;
    const contentType = (options?.httpMetadata as R2HTTPMetadata | undefined)?.contentType;
    this.uploads.set(uploadId, { key, parts: new Map(), ...(contentType ? { contentType } : {}) });
    return this.handle(key, uploadId);
  }

  resumeMultipartUpload(key: string, uploadId: string): ReleaseUpload {
    return this.handle(key, uploadId);
  }

  /** Sizes of the parts of an upload, in part-number order. */
  partSizes(uploadId: string): number[] {
    const upload = this.uploads.get(uploadId);
    return upload ? [...upload.parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => p.bytes.length) : [];
  }

  private handle(key: string, uploadId: string): ReleaseUpload {
    const pending = () => {
      const upload = this.uploads.get(uploadId);
      if (!upload || upload.key !== key) throw new Error(`no upload ${uploadId} for ${key}`);
      return upload;
    };
    return {
      uploadId,
      uploadPart: async (partNumber, value) => {
        this.step("part", `${key} #${partNumber} ${value.length}`);
        if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) throw new Error("bad part number");
        const etag = createHash("md5").update(value).digest("hex");
        pending().parts.set(partNumber, { bytes: value.slice(), etag });
        return { partNumber, etag };
      },
      complete: async (parts) => {
        this.step("complete", `${key} ${parts.length}`);
        const upload = pending();
        const chosen = parts.map(({ partNumber, etag }, i) => {
          const part = upload.parts.get(partNumber);
          if (!part || part.etag !== etag) throw new Error(`part ${partNumber}: unknown or wrong etag`);
          if (i > 0 && partNumber <= parts[i - 1]!.partNumber) throw new Error("parts out of order");
          return part.bytes;
        });
        const size = chosen[0]?.length ?? 0;
        for (const [i, bytes] of chosen.entries()) {
          const last = i === chosen.length - 1;
          if (!last && (bytes.length < MIN_PART_BYTES || bytes.length !== size)) throw new Error("EntityTooSmall / unequal parts");
          if (last && bytes.length > size) throw new Error("last part larger than the others");
        }
        const all = Buffer.concat(chosen);
        const { contentType } = upload;
        this.objects.set(key, { bytes: all, ...(contentType ? { contentType } : {}) });
        this.uploads.delete(uploadId);
        return { size: all.length };
      },
      abort: async () => {
        this.step("abort", key);
        this.uploads.delete(uploadId);
      },
    };
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The shape of the release's records table, plus a boolean, to cover every column type. */
export const RECORD_COLUMNS: readonly Column[] = [
  { name: "id", type: "int64", nullable: false },
  { name: "parent_id", type: "int64" },
  { name: "amount_in_parent", type: "int32" },
  { name: "owner_pseudonym", type: "string", nullable: false },
  { name: "name", type: "string", nullable: false },
  { name: "description", type: "string" },
  { name: "weight_g", type: "double" },
  { name: "volume_cm3", type: "double" },
  { name: "is_reference", type: "boolean" },
  { name: "circularity_properties", type: "object" },
  { name: "created_at", type: "datetime", nullable: false },
  { name: "updated_at", type: "datetime" },
];

const NAMES = ["Fairphone 4", "Waschmaschine Öko", "咖啡机", "Ноутбук", "مروحة", "e\u0301cran 👩‍🔬", "Drill, cordless", 'Lamp "Arc"'];
const DESCRIPTIONS = ["=SUM(A1:A9)", "+31 20 123", "-", "@home", "\tindented", "two\r\nlines", "plain", "emoji 🧪🔩", 'comma, and "quote"'];

const LETTERS = "abcdefghijklmnopqrstuvwxyzäöüß";

/** Words of pseudo-random letters: text that compresses about as badly as real descriptions. */
function words(next: () => number, count: number): string {
  let text = "";
  for (let w = 0; w < count; w++) {
    const length = 2 + Math.floor(next() * 9);
    for (let k = 0; k < length; k++) text += LETTERS[Math.floor(next() * LETTERS.length)];
    text += " ";
  }
  return text.trimEnd();
}

/** Deterministic rows like the records table's (seeded, so both formats see the same data). */
export function* recordRows(count: number, seed = 1): Generator<TableRow> {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const base = Date.UTC(2025, 0, 1) / 1000;
  for (let i = 0; i < count; i++) {
    const id = i + 1;
    const isComponent = i % 4 !== 0;
    const r = next();
    yield {
      id,
      parent_id: isComponent ? id - (i % 4) : null,
      amount_in_parent: isComponent ? 1 + (i % 7) : null,
      owner_pseudonym: `p${(i % 997).toString(16).padStart(8, "0")}`,
      name: `${NAMES[i % NAMES.length]} #${id}`,
      description: i % 5 === 0 ? null : `${DESCRIPTIONS[i % DESCRIPTIONS.length]} ${words(next, Math.floor(r * 16))}`,
      weight_g: i % 6 === 0 ? null : Math.round(r * 1e6) / 100,
      volume_cm3: i % 9 === 0 ? null : r * 1000,
      is_reference: i % 10 === 0 ? null : i % 3 === 0 ? 1 : false,
      circularity_properties: i % 3 === 0 ? null : { recyclability: `grade ${i % 5}`, disassemblability: null },
      created_at: base + i * 60,
      updated_at: i % 8 === 0 ? null : new Date((base + i * 60 + 30) * 1000),
    };
  }
}

/** Rows in batches of `size`, as the build reads them page by page. */
export function* batches<T>(rows: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = [];
  for (const row of rows) {
    batch.push(row);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** A plain RFC 4180 reader (quoted cells, doubled quotes, CRLF), written apart from the writer. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += ch;
  }
  if (cell !== "" || row.length > 0) throw new Error("the CSV does not end with CRLF");
  return rows;
}
