import type { ByteSink } from "../release/byte-sink";

const encoder = new TextEncoder();

/**
 * Text written to a sink as one gzip member (RFC 1952), compressed as it comes. A file made of
 * several members, one after the other, is still one gzip file: `gunzip` and Node's zlib read
 * them as one text. A backup ends a member at every checkpoint, because a compressor's state
 * cannot be carried to another invocation; the manifest records each member's length, so that
 * readers that stop after one member (the web's DecompressionStream) can split the file.
 *
 * The compressed output is collected while text is written and handed to the sink by `write`
 * and `finish`, never by the stream's own pump: a sink that fails then fails the writer's own
 * call instead of stalling the stream.
 */
export class GzipMember {
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly pending: Uint8Array[] = [];
  private readonly pumped: Promise<void>;
  private bytes = 0;

  constructor(private readonly sink: ByteSink) {
    const stream = new CompressionStream("gzip");
    this.writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    this.pumped = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        this.pending.push(value);
      }
    })();
    // Surfaced by `finish`; without this a failure before then would be an unhandled rejection.
    this.pumped.catch(() => undefined);
  }

  async write(text: string): Promise<void> {
    await this.writer.write(encoder.encode(text));
    await this.drain();
  }

  /** Ends the member; returns its length in bytes. */
  async finish(): Promise<number> {
    await this.writer.close();
    await this.pumped;
    await this.drain();
    return this.bytes;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const chunk = this.pending.shift()!;
      await this.sink.write(chunk);
      this.bytes += chunk.length;
    }
  }
}
