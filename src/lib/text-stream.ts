/** How a streamed body ended: read to the end, stopped by the reader (a disconnect), or broken by an error. */
export type StreamOutcome = "complete" | "cancelled" | "failed";

/**
 * A UTF-8 byte stream pulled from `source` one piece at a time: the next piece is only asked
 * for when the reader wants more bytes (high-water mark 0), so a slow client holds the producer
 * back and memory stays at one piece. When the reader goes away the stream is cancelled, which
 * ends `source` (`return()`), so no further work is done; so does `signal` (the request's) aborting.
 * `onEnd` is told how it ended, once.
 */
export function textStream(
  source: AsyncIterator<string, unknown, undefined>,
  onEnd: (outcome: StreamOutcome, error?: unknown) => void,
  signal?: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let ended = false;
  const end = (outcome: StreamOutcome, error?: unknown) => {
    if (ended) return;
    ended = true;
    signal?.removeEventListener("abort", stop);
    onEnd(outcome, error);
  };
  // workerd does not always cancel a response body whose client went away (it just stops
  // reading); the request's signal (compatibility flag `enable_request_signal`) says so at once.
  function stop() {
    end("cancelled");
    // An error while the source cleans up has nobody left to tell.
    Promise.resolve(source.return?.(undefined)).catch(() => {});
  }
  signal?.addEventListener("abort", stop);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (ended) return;
        try {
          // Skip empty pieces: an empty chunk would satisfy the read without any progress.
          for (;;) {
            const next = await source.next();
            // Stopped while this piece was being made: nobody wants it.
            if (ended) return;
            if (next.done) {
              controller.close();
              end("complete");
              return;
            }
            if (next.value.length > 0) {
              controller.enqueue(encoder.encode(next.value));
              return;
            }
          }
        } catch (error) {
          if (ended) return;
          end("failed", error);
          controller.error(error);
        }
      },
      async cancel() {
        stop();
      },
    },
    { highWaterMark: 0 },
  );
}
