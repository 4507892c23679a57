import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CounterSpec } from "../../src/rate-limits/object";
import { freshStub, pendingAlarm, type Stub, sleep, storedRows } from "../support/limits";

// The minute request rates, which the counter store keeps in memory and never in storage.

/** Whether the object has created its `counters` table (its first durable counter does). */
function hasTable(stub: Stub): Promise<boolean> {
  return runInDurableObject(
    stub,
    (_, state) => state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'counters'").toArray().length === 1,
  );
}

describe("RateLimiter memory counters (minute request rates)", () => {
  const minute: CounterSpec = { name: "read-ip", amount: 3, windowSeconds: 60 };

  it("counts exactly, refuses without counting, and never touches storage", async () => {
    const stub = freshStub("memory");
    const results = await Promise.all(Array.from({ length: 10 }, () => stub.consume([minute])));
    expect(results.filter((result) => result.allowed)).toHaveLength(3);
    const refused = results.find((result) => !result.allowed)!;
    expect(refused.counters[0]).toMatchObject({ name: "read-ip", used: 3, remaining: 0, exhausted: true });
    expect(await hasTable(stub)).toBe(false);
    expect(await pendingAlarm(stub)).toBeNull();
  });

  it("takes from a memory and a durable counter together, or from neither", async () => {
    const stub = freshStub("memory-mixed");
    const durable: CounterSpec = { name: "register-ip", amount: 1, windowSeconds: 3600, durable: true };
    expect((await stub.consume([minute, durable])).allowed).toBe(true);
    const refused = await stub.consume([minute, durable]);
    expect(refused.allowed).toBe(false);
    // The refusal by the durable counter took nothing from the memory one.
    expect((await stub.consume([minute])).counters[0]!.used).toBe(2);
    expect(await storedRows(stub)).toMatchObject([{ name: "register-ip", used: 1 }]);
  });

  it("refunds in the same window only, and starts a new window once the old one ended", async () => {
    const stub = freshStub("memory-window");
    const short: CounterSpec = { name: "login-ip", amount: 2, windowSeconds: 1 };
    const first = await stub.consume([short]);
    await stub.consume([short]);
    await stub.refund([{ name: "login-ip", windowStart: first.counters[0]!.windowStart - 1 }]);
    expect((await stub.consume([short])).allowed).toBe(false);
    await stub.refund([{ name: "login-ip", windowStart: first.counters[0]!.windowStart }]);
    expect((await stub.consume([short])).counters[0]).toMatchObject({ used: 2, exhausted: false });

    await sleep(1_100);
    const renewed = await stub.consume([short]);
    expect(renewed.counters[0]!.used).toBe(1);
    expect(renewed.counters[0]!.windowStart).toBeGreaterThanOrEqual(first.counters[0]!.windowStart + 1_000);
    expect(await hasTable(stub)).toBe(false);
  });
});
