import type { ByteSink } from "./byte-sink";
import { type Sha256Stream, sha256Hex, sha256Stream } from "./sha256-stream";

/** The part of an R2 multipart upload the sink uses; R2's own object fits it. */
export interface ReleaseUpload {
  readonly uploadId: string;
  uploadPart(partNumber: number, value: Uint8Array): Promise<R2UploadedPart>;
  complete(parts: R2UploadedPart[]): Promise<{ readonly size: number }>;
  abort(): Promise<void>;
}

/** The part of an R2 bucket the sink uses; `env.UPLOADS` fits it, and tests bring their own. */
export interface ReleaseBucket {
  put(key: string, value: Uint8Array, options?: R2PutOptions): Promise<{ readonly size: number } | null>;
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer>; readonly body: ReadableStream<Uint8Array> } | null>;
  delete(key: string): Promise<void>;
  createMultipartUpload(key: string, options?: R2MultipartOptions): Promise<ReleaseUpload>;
  resumeMultipartUpload(key: string, uploadId: string): ReleaseUpload;
}

/** R2: every part but the last at least 5 MiB, all of them the same size; at most 10,000. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
export const MAX_PARTS = 10_000;

export interface MultipartSinkOptions {
  /** Size of every part but the last (default and minimum 5 MiB; a multiple of 64 bytes). */
  readonly partBytes?: number;
  readonly contentType?: string;
  readonly customMetadata?: Readonly<Record<string, string>>;
  /**
   * Where `checkpoint()` keeps the bytes not yet in a part (default `<key>.checkpoint`). Put it
   * outside anything served publicly; it is deleted when the file is closed or aborted.
   */
  readonly checkpointKey?: string;
}

/** Everything a later invocation needs to continue the same object (JSON-safe). */
export interface MultipartSinkState {
  readonly key: string;
  readonly options: Required<Pick<MultipartSinkOptions, "partBytes" | "checkpointKey">> &
    Pick<MultipartSinkOptions, "contentType" | "customMetadata">;
  /** Null until the first part was due: a file that ends below one part is a single put. */
  readonly uploadId: string | null;
  readonly parts: readonly R2UploadedPart[];
  /** The bytes after the parts, stored at `options.checkpointKey`; their size and SHA-256. */
  readonly tail: { readonly bytes: number; readonly sha256: string } | null;
}

export interface StoredFile {
  readonly key: string;
  readonly bytes: number;
  /** Lower-case hex SHA-256 of the whole object. */
  readonly sha256: string;
  /** Parts of the multipart upload; 0 for a single put. */
  readonly parts: number;
}

/**
 * A file written to R2 as it is produced: bytes are collected into parts of `partBytes` and
 * uploaded one at a time (one part in memory), and the whole object's SHA-256 and size are
 * computed on the way. A file smaller than one part is a single put, checked by R2 against its
 * SHA-256. Any failure aborts the upload before it is thrown; so does `abort()`.
 *
 * Resumable: `checkpoint()` stores the bytes not yet in a part under `checkpointKey` and returns
 * a state (upload id, parts with their etags, the tail's size and hash) that
 * `MultipartSink.resume` continues from in another invocation. A tail that changed since (a later
 * checkpoint was written, its state never saved) is refused on resume: discard the state and
 * write the file again.
 *
 * The SHA-256 is native (`crypto.DigestStream`) and cannot be carried to another invocation: a
 * file resumed after parts were uploaded is hashed once complete, by reading it back from R2.
 */
export class MultipartSink implements ByteSink {
  private buffer = new Uint8Array(0);
  private fill = 0;
  private state: "open" | "closed" | "failed" = "open";
  /** The SHA-256 of the parts so far; null until the first part, and always in a sink resumed after parts (hashed at close). */
  private hash: Sha256Stream | null = null;

  private constructor(
    private readonly bucket: ReleaseBucket,
    private readonly key: string,
    private readonly options: MultipartSinkState["options"],
    private upload: ReleaseUpload | null,
    private readonly parts: R2UploadedPart[],
    private checkpointStored: boolean,
  ) {}

  static create(bucket: ReleaseBucket, key: string, options: MultipartSinkOptions = {}): MultipartSink {
    const partBytes = options.partBytes ?? MIN_PART_BYTES;
    if (!Number.isSafeInteger(partBytes) || partBytes < MIN_PART_BYTES || partBytes % 64 !== 0 || partBytes > 2 ** 30) {
      throw new Error("partBytes must be a multiple of 64 from 5 MiB to 1 GiB");
    }
    const settings = { ...options, partBytes, checkpointKey: options.checkpointKey ?? `${key}.checkpoint` };
    return new MultipartSink(bucket, key, settings, null, [], false);
  }

  /** Continues from a saved state; throws if its tail is gone or changed. */
  static async resume(bucket: ReleaseBucket, saved: MultipartSinkState): Promise<MultipartSink> {
    const { key, options, uploadId, parts, tail } = saved;
    if ((uploadId === null) !== (parts.length === 0)) throw new Error("inconsistent multipart sink state");
    const upload = uploadId === null ? null : bucket.resumeMultipartUpload(key, uploadId);
    const sink = new MultipartSink(bucket, key, options, upload, [...parts], tail !== null);
    if (tail !== null) {
      const object = await bucket.get(options.checkpointKey);
      const bytes = object === null ? null : new Uint8Array(await object.arrayBuffer());
      if (bytes === null || bytes.length !== tail.bytes || (await sha256Hex(bytes)) !== tail.sha256) {
        throw new Error(`the checkpoint of ${key} is missing or changed since this state was saved`);
      }
      sink.grow(bytes.length);
      sink.buffer.set(bytes);
      sink.fill = bytes.length;
    }
    return sink;
  }

  /** Aborts the upload a saved state names and deletes its checkpoint (retrying a file). */
  static async discard(bucket: ReleaseBucket, saved: MultipartSinkState): Promise<void> {
    if (saved.uploadId !== null) await bucket.resumeMultipartUpload(saved.key, saved.uploadId).abort();
    if (saved.tail !== null) await bucket.delete(saved.options.checkpointKey);
  }

  /** Bytes taken so far (uploaded or waiting for the next part). */
  get bytesWritten(): number {
    return this.parts.length * this.options.partBytes + this.fill;
  }

  async write(chunk: Uint8Array): Promise<void> {
    this.assertOpen();
    const { partBytes } = this.options;
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(chunk.length - offset, partBytes - this.fill);
      this.grow(this.fill + take);
      this.buffer.set(chunk.subarray(offset, offset + take), this.fill);
      this.fill += take;
      offset += take;
      if (this.fill === partBytes) await this.guard(() => this.uploadPart());
    }
  }

  /** Stores the bytes not yet in a part and returns the state to resume from. */
  async checkpoint(): Promise<MultipartSinkState> {
    this.assertOpen();
    const tail = this.buffer.subarray(0, this.fill);
    const tailHash = await sha256Hex(tail);
    if (this.fill > 0) {
      await this.guard(() => this.bucket.put(this.options.checkpointKey, tail));
      this.checkpointStored = true;
    }
    return {
      key: this.key,
      options: this.options,
      uploadId: this.upload?.uploadId ?? null,
      parts: this.parts.map(({ partNumber, etag }) => ({ partNumber, etag })),
      tail: this.fill > 0 ? { bytes: this.fill, sha256: tailHash } : null,
    };
  }

  /** Uploads the rest and completes the object. */
  async close(): Promise<StoredFile> {
    this.assertOpen();
    const bytes = this.bytesWritten;
    const tail = this.buffer.subarray(0, this.fill);
    const digest = await this.guard(async () => {
      if (this.upload === null) {
        const hex = await sha256Hex(tail);
        await this.bucket.put(this.key, tail, { ...this.metadata(), sha256: hex });
        return hex;
      }
      if (this.fill > 0) await this.uploadPart(tail);
      const object = await this.upload.complete(this.parts);
      if (object.size !== bytes) throw new Error(`${this.key} completed with ${object.size} bytes, not ${bytes}`);
      return this.hash !== null ? await this.hash.digest() : await this.hashStored();
    });
    this.state = "closed";
    this.buffer = new Uint8Array(0);
    if (this.checkpointStored) await this.bucket.delete(this.options.checkpointKey);
    return { key: this.key, bytes, sha256: digest, parts: this.parts.length };
  }

  /** Gives the file up: aborts the upload and deletes the checkpoint. */
  async abort(): Promise<void> {
    if (this.state === "closed") throw new Error(`${this.key} is already complete`);
    this.state = "failed";
    this.buffer = new Uint8Array(0);
    await this.upload?.abort();
    if (this.checkpointStored) await this.bucket.delete(this.options.checkpointKey);
  }

  private async uploadPart(bytes: Uint8Array = this.buffer): Promise<void> {
    if (this.parts.length === MAX_PARTS) throw new Error(`${this.key} needs more than ${MAX_PARTS} parts`);
    this.upload ??= await this.bucket.createMultipartUpload(this.key, this.metadata());
    const partNumber = this.parts.length + 1;
    // The first part starts the hash; a sink resumed after parts leaves it to `hashStored`.
    if (partNumber === 1) this.hash = sha256Stream();
    // Awaited before the upload: the buffer is reused for the next part once this one is sent.
    if (this.hash !== null) await this.hash.update(bytes);
    const uploaded = await this.upload.uploadPart(partNumber, bytes);
    this.parts.push({ partNumber: uploaded.partNumber, etag: uploaded.etag });
    this.fill = 0;
  }

  /** The SHA-256 of the completed object, read back from R2 (a file continued from another invocation's parts). */
  private async hashStored(): Promise<string> {
    const object = await this.bucket.get(this.key);
    if (object === null) throw new Error(`${this.key} is missing after its upload completed`);
    const hash = sha256Stream();
    const reader = object.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await hash.update(value);
    }
    return hash.digest();
  }

  private metadata(): R2MultipartOptions {
    const { contentType, customMetadata } = this.options;
    return {
      ...(contentType === undefined ? {} : { httpMetadata: { contentType } }),
      ...(customMetadata === undefined ? {} : { customMetadata: { ...customMetadata } }),
    };
  }

  /** Runs a storage step; on failure the upload is aborted (its own failure is secondary). */
  private async guard<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      this.state = "failed";
      await this.abort().catch(() => undefined);
      throw error;
    }
  }

  private grow(size: number): void {
    if (size <= this.buffer.length) return;
    const next = new Uint8Array(Math.min(this.options.partBytes, Math.max(size, this.buffer.length * 2, 64 * 1024)));
    next.set(this.buffer.subarray(0, this.fill));
    this.buffer = next;
  }

  private assertOpen(): void {
    if (this.state !== "open") throw new Error(`${this.key} is ${this.state === "closed" ? "complete" : "aborted"}`);
  }
}
