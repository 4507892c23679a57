/**
 * Inflating a zlib stream with DecompressionStream in bounded memory. workerd's implementation
 * inflates each written chunk whole into an internal buffer, without backpressure, so what is
 * buffered is bounded only by how much compressed data is written before the output is read.
 */
import { ImageStructureError } from "./exif";

/**
 * Compressed bytes per write. Deflate expands at most ~1032:1, so 8 KiB bounds the internal
 * buffer by about 8.5 MB however well the data compresses. Each write/read round trip costs
 * ~0.1 ms in workerd, so much smaller pieces make incompressible data slow (18 MB of PNG data:
 * 0.7 s with 4 KiB pieces, 0.47 s with 8 KiB, 0.27 s with 16 KiB).
 */
const PIECE = 8192;
/** Bytes per read; a piece's output takes one read unless it inflates past this. */
const READ_SIZE = 1 << 20;

function* pieces(parts: readonly Uint8Array[]): Generator<Uint8Array> {
  for (const part of parts) for (let o = 0; o < part.length; o += PIECE) yield part.subarray(o, o + PIECE);
}

const STARVED = Symbol("starved");

/**
 * Inflates the zlib stream made of `parts` (concatenated), yielding output chunks, each valid
 * only until the next is requested. The next piece is written once the output of the previous
 * ones has been read (a read came back shorter than asked for), or when a read has waited a
 * timer turn: pieces that inflate to nothing would otherwise stall. Stopping early (break)
 * cancels the stream. Failures throw `ImageStructureError` prefixed with `what`.
 */
export async function* inflateZlib(parts: readonly Uint8Array[], what: string): AsyncGenerator<Uint8Array> {
  const input = pieces(parts);
  const ds = new DecompressionStream("deflate");
  const writer = ds.writable.getWriter();
  let byob: ReadableStreamBYOBReader | null = null;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  try {
    byob = ds.readable.getReader({ mode: "byob" });
  } catch {
    reader = ds.readable.getReader(); // Node's stream is not a byte stream; it has backpressure instead
  }
  let buffer = new Uint8Array(byob ? READ_SIZE : 0);
  let capacity = byob ? READ_SIZE : 0;
  let writing: Promise<void> = Promise.resolve();
  let writeError: unknown = null;
  let inputDone = false;
  const feed = () => {
    if (inputDone) return;
    const next = input.next();
    if (next.done) inputDone = true;
    const step = next.done ? () => writer.close() : () => writer.write(next.value);
    writing = writing.then(step);
    writing.catch((e: unknown) => (writeError ??= e));
  };
  let finished = false;
  try {
    feed();
    for (;;) {
      const pending = byob ? byob.read(buffer) : reader!.read();
      pending.catch(() => {}); // a read left behind by an error must not be reported unhandled
      let result: ReadableStreamReadResult<Uint8Array>;
      for (;;) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const starved = new Promise<typeof STARVED>((resolve) => (timer = setTimeout(resolve, 0, STARVED)));
        const r = await Promise.race([pending, starved]);
        clearTimeout(timer as never); // number in workerd, Timeout in Node typings
        if (r !== STARVED) {
          result = r;
          break;
        }
        if (writeError !== null) throw writeError;
        feed();
      }
      if (result.done) break;
      const chunk = result.value;
      capacity = Math.max(capacity, chunk.length);
      if (chunk.length < capacity) feed();
      yield chunk;
      if (byob) buffer = new Uint8Array(chunk.buffer as ArrayBuffer);
    }
    finished = true;
  } catch (e) {
    throw new ImageStructureError(`${what}: bad compressed data (${e instanceof Error ? e.message : String(e)})`);
  } finally {
    if (!finished) {
      (byob ?? reader)!.cancel().catch(() => {});
      writer.abort().catch(() => {});
    }
  }
}
