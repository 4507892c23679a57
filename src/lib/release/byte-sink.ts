/**
 * Where a table writer's bytes go (the multipart R2 sink, or memory in tests). The chunk is only
 * lent: the writer reuses its memory once the promise settles, so a sink that keeps the bytes
 * copies them first. Writes are sequential: a writer never calls `write` before the previous
 * call settled.
 */
export interface ByteSink {
  write(chunk: Uint8Array): Promise<void>;
}
