import { describe, expect, it } from "vitest";
import { type StreamOutcome, textStream } from "../../../src/lib/text-stream";

/** A source that records how far it was pulled and whether it was stopped. */
function source(pieces: string[], failAt = -1) {
  const state = { made: 0, stopped: false };
  async function* generate() {
    try {
      for (const [i, piece] of pieces.entries()) {
        if (i === failAt) throw new Error("database went away");
        state.made += 1;
        yield piece;
      }
    } finally {
      state.stopped = true;
    }
  }
  return { iterator: generate(), state };
}

describe("textStream", () => {
  it("makes a piece only when the reader asks for one, and reports completion once", async () => {
    const { iterator, state } = source(["a", "", "bé"]);
    const outcomes: StreamOutcome[] = [];
    const stream = textStream(iterator, (outcome) => outcomes.push(outcome));
    await new Promise((r) => setTimeout(r, 10));
    expect(state.made).toBe(0);
    const reader = stream.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("a");
    expect(state.made).toBe(1);
    // The empty piece is skipped rather than handed out as an empty read.
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("bé");
    expect((await reader.read()).done).toBe(true);
    expect(outcomes).toEqual(["complete"]);
  });

  it("stops the source when the reader cancels", async () => {
    const { iterator, state } = source(["a", "b", "c"]);
    const outcomes: StreamOutcome[] = [];
    const reader = textStream(iterator, (outcome) => outcomes.push(outcome)).getReader();
    await reader.read();
    await reader.cancel();
    expect(state).toEqual({ made: 1, stopped: true });
    expect(outcomes).toEqual(["cancelled"]);
  });

  it("stops the source when the request's signal aborts", async () => {
    const { iterator, state } = source(["a", "b", "c"]);
    const outcomes: StreamOutcome[] = [];
    const controller = new AbortController();
    const reader = textStream(iterator, (outcome) => outcomes.push(outcome), controller.signal).getReader();
    await reader.read();
    controller.abort();
    await new Promise((r) => setTimeout(r, 0));
    expect(state).toEqual({ made: 1, stopped: true });
    expect(outcomes).toEqual(["cancelled"]);
  });

  it("errors the stream and reports the failure when the source throws", async () => {
    const { iterator } = source(["a", "b"], 1);
    const ended: [StreamOutcome, unknown][] = [];
    const reader = textStream(iterator, (outcome, error) => ended.push([outcome, error])).getReader();
    await reader.read();
    await expect(reader.read()).rejects.toThrow("database went away");
    expect(ended).toEqual([["failed", expect.objectContaining({ message: "database went away" })]]);
  });
});
