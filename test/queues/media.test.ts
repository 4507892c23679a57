import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";

describe("media queue consumer", () => {
  it("retries messages that name no known job, so they end in the dead-letter queue", async () => {
    const batch = createMessageBatch("relab-media", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { type: "no-such-job" } },
      { id: "m2", timestamp: new Date(), attempts: 1, body: "not an object" },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId).sort()).toEqual(["m1", "m2"]);
  });
});
