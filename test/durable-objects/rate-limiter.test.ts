import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type CounterSpec, RateLimiter } from "../../src/rate-limits/object";
import { freshStub, pendingAlarm, sleep, storedRows } from "../support/limits";

// Durable counters (SQLite rows the tests can inspect); the minute request rates, which never
// touch storage, are in rate-limiter-memory.test.ts.

describe("RateLimiter counting", () => {
  it("counts up to the amount, then refuses; readings describe every counter", async () => {
    const stub = freshStub("count");
    const spec: CounterSpec = { name: "a", amount: 3, windowSeconds: 60, durable: true };

    const first = await stub.consume([spec]);
    expect(first.allowed).toBe(true);
    expect(first.counters).toHaveLength(1);
    const windowStart = first.counters[0]!.windowStart;
    // A fresh window starts now: the whole window is left.
    expect(first.counters[0]).toEqual({ ...spec, used: 1, remaining: 2, resetSeconds: 60, windowStart, exhausted: false });

    const second = await stub.consume([spec]);
    expect(second.allowed).toBe(true);
    expect(second.counters[0]).toMatchObject({ used: 2, remaining: 1, windowStart, exhausted: false });

    const third = await stub.consume([spec]);
    expect(third.allowed).toBe(true);
    // The last unit taken: spent, but this call was not refused because of it.
    expect(third.counters[0]).toMatchObject({ used: 3, remaining: 0, windowStart, exhausted: false });

    const fourth = await stub.consume([spec]);
    expect(fourth.allowed).toBe(false);
    expect(fourth.counters[0]).toMatchObject({ ...spec, used: 3, remaining: 0, windowStart, exhausted: true });
    expect(fourth.counters[0]!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(fourth.counters[0]!.resetSeconds).toBeLessThanOrEqual(60);

    // Refusals count nothing.
    expect((await stub.consume([spec])).counters[0]!.used).toBe(3);
    expect(await storedRows(stub)).toEqual([{ name: "a", window_start: windowStart, ends_at: windowStart + 60_000, used: 3 }]);
  });

  it("grants up to the units asked for, no more than the fullest counter has left, and refuses when one is spent", async () => {
    const stub = freshStub("grants");
    const narrow: CounterSpec = { name: "narrow", amount: 5, windowSeconds: 60 };
    const wide: CounterSpec = { name: "wide", amount: 100, windowSeconds: 60 };
    const first = await stub.consume([narrow, wide], 3);
    expect(first.allowed).toBe(true);
    expect(first.granted).toBe(3);
    expect(first.counters.map((c) => [c.name, c.used, c.remaining])).toEqual([
      ["narrow", 3, 2],
      ["wide", 3, 97],
    ]);
    // Two left in the narrow counter: two granted, from both counters.
    const second = await stub.consume([narrow, wide], 8);
    expect(second.granted).toBe(2);
    expect(second.counters.map((c) => [c.name, c.used, c.remaining])).toEqual([
      ["narrow", 5, 0],
      ["wide", 5, 95],
    ]);
    const third = await stub.consume([narrow, wide], 8);
    expect(third).toMatchObject({ allowed: false, granted: 0 });
    expect(third.counters.map((c) => [c.name, c.used, c.exhausted])).toEqual([
      ["narrow", 5, true],
      ["wide", 5, false],
    ]);
    // Nonsense sizes ask for one unit.
    for (const units of [0, -4, 1.5, Number.NaN]) {
      expect((await freshStub("odd-grants").consume([wide], units)).granted).toBe(1);
    }
  });

  it("takes a unit from every counter or from none", async () => {
    const stub = freshStub("all-or-nothing");
    const narrow: CounterSpec = { name: "narrow", amount: 2, windowSeconds: 60, durable: true };
    const wide: CounterSpec = { name: "wide", amount: 10, windowSeconds: 3600, durable: true };

    for (let i = 1; i <= 2; i++) {
      const result = await stub.consume([narrow, wide]);
      expect(result.allowed).toBe(true);
      expect(result.counters.map((c) => [c.name, c.used, c.remaining, c.exhausted])).toEqual([
        ["narrow", i, 2 - i, false],
        ["wide", i, 10 - i, false],
      ]);
    }

    const refused = await stub.consume([narrow, wide]);
    expect(refused.allowed).toBe(false);
    const [narrowReading, wideReading] = refused.counters;
    expect(narrowReading).toMatchObject({ name: "narrow", amount: 2, windowSeconds: 60, used: 2, remaining: 0, exhausted: true });
    // The other counter had units left: not exhausted, and not incremented by the refused call.
    expect(wideReading).toMatchObject({ name: "wide", amount: 10, windowSeconds: 3600, used: 2, remaining: 8, exhausted: false });
    expect(narrowReading!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(narrowReading!.resetSeconds).toBeLessThanOrEqual(60);
    expect(wideReading!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(wideReading!.resetSeconds).toBeLessThanOrEqual(3600);
    expect((await storedRows(stub)).map((row) => [row.name, row.used])).toEqual([
      ["narrow", 2],
      ["wide", 2],
    ]);

    // The order of the specs does not matter: still refused, still nothing counted.
    expect((await stub.consume([wide, narrow])).allowed).toBe(false);
    // On its own, the unspent counter goes on from where it was.
    const alone = await stub.consume([wide]);
    expect(alone.allowed).toBe(true);
    expect(alone.counters[0]).toMatchObject({ name: "wide", used: 3, remaining: 7, exhausted: false });
  });

  it("is exact under concurrency: 50 calls at once on an amount of 10 allow exactly 10", async () => {
    const stub = freshStub("concurrency");
    const spec: CounterSpec = { name: "burst", amount: 10, windowSeconds: 60, durable: true };
    const results = await Promise.all(Array.from({ length: 50 }, () => stub.consume([spec])));

    const allowed = results.filter((result) => result.allowed);
    expect(allowed).toHaveLength(10);
    expect(results.filter((result) => !result.allowed)).toHaveLength(40);
    // Every allowed call took a distinct unit.
    expect(allowed.map((result) => result.counters[0]!.used).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const result of results.filter((r) => !r.allowed)) {
      expect(result.counters[0]).toMatchObject({ used: 10, remaining: 0, exhausted: true });
    }
    expect((await storedRows(stub)).map((row) => row.used)).toEqual([10]);
  });

  it("starts a new window, counting from 1 again, once the old one has ended", async () => {
    const stub = freshStub("window");
    const spec: CounterSpec = { name: "short", amount: 2, windowSeconds: 1, durable: true };

    const first = await stub.consume([spec]);
    const oldWindow = first.counters[0]!.windowStart;
    expect(first.counters[0]).toMatchObject({ used: 1, remaining: 1, resetSeconds: 1 });
    expect((await stub.consume([spec])).allowed).toBe(true);
    expect((await stub.consume([spec])).allowed).toBe(false);

    await sleep(1_100);

    const renewed = await stub.consume([spec]);
    expect(renewed.allowed).toBe(true);
    const newWindow = renewed.counters[0]!.windowStart;
    expect(renewed.counters[0]).toEqual({ ...spec, used: 1, remaining: 1, resetSeconds: 1, windowStart: newWindow, exhausted: false });
    expect(newWindow).not.toBe(oldWindow);
    expect(newWindow).toBeGreaterThanOrEqual(oldWindow + 1_000);
    expect(await storedRows(stub)).toEqual([{ name: "short", window_start: newWindow, ends_at: newWindow + 1_000, used: 1 }]);
  });
});

describe("RateLimiter refunds", () => {
  it("gives back one unit in the same window, never below zero", async () => {
    const stub = freshStub("refund");
    const spec: CounterSpec = { name: "budget", amount: 3, windowSeconds: 60, durable: true };
    await stub.consume([spec]);
    const second = await stub.consume([spec]);
    const windowStart = second.counters[0]!.windowStart;
    expect(second.counters[0]!.used).toBe(2);

    // A unit of an earlier window is not given back to this one.
    await stub.refund([{ name: "budget", windowStart: windowStart - 1, durable: true }]);
    expect((await storedRows(stub))[0]!.used).toBe(2);

    await stub.refund([{ name: "budget", windowStart, durable: true }]);
    expect((await storedRows(stub))[0]).toEqual({ name: "budget", window_start: windowStart, ends_at: windowStart + 60_000, used: 1 });

    // More refunds than units: stops at zero.
    await stub.refund([{ name: "budget", windowStart, durable: true }]);
    await stub.refund([{ name: "budget", windowStart, durable: true }]);
    await stub.refund([{ name: "budget", windowStart, durable: true }]);
    expect((await storedRows(stub))[0]!.used).toBe(0);

    // Refunding a counter that was never counted creates nothing.
    await stub.refund([{ name: "unknown", windowStart, durable: true }]);
    expect((await storedRows(stub)).map((row) => row.name)).toEqual(["budget"]);

    // The window itself is unchanged: counting goes on in it.
    const next = await stub.consume([spec]);
    expect(next.counters[0]).toMatchObject({ used: 1, remaining: 2, windowStart });
  });

  it("frees the unit a refund gives back", async () => {
    const stub = freshStub("refund-frees");
    const spec: CounterSpec = { name: "tight", amount: 1, windowSeconds: 60, durable: true };
    const taken = await stub.consume([spec]);
    expect((await stub.consume([spec])).allowed).toBe(false);
    await stub.refund([{ name: "tight", windowStart: taken.counters[0]!.windowStart, durable: true }]);
    const again = await stub.consume([spec]);
    expect(again.allowed).toBe(true);
    expect(again.counters[0]).toMatchObject({ used: 1, remaining: 0, windowStart: taken.counters[0]!.windowStart });
  });

  it("does not land a refund of an ended window in the next one", async () => {
    const stub = freshStub("refund-old-window");
    const spec: CounterSpec = { name: "short", amount: 5, windowSeconds: 1, durable: true };
    const old = await stub.consume([spec]);
    await sleep(1_100);
    const current = await stub.consume([spec]);
    expect(current.counters[0]!.windowStart).not.toBe(old.counters[0]!.windowStart);
    expect(current.counters[0]!.used).toBe(1);

    await stub.refund([{ name: "short", windowStart: old.counters[0]!.windowStart, durable: true }]);
    expect(await storedRows(stub)).toEqual([
      { name: "short", window_start: current.counters[0]!.windowStart, ends_at: current.counters[0]!.windowStart + 1_000, used: 1 },
    ]);
  });
});

describe("RateLimiter storage and clean-up", () => {
  it("keeps its counters in SQLite storage", async () => {
    const stub = freshStub("storage");
    const result = await stub.consume([
      { name: "x", amount: 5, windowSeconds: 60, durable: true },
      { name: "y", amount: 7, windowSeconds: 86_400, durable: true },
    ]);
    const [x, y] = result.counters;
    const rows = await runInDurableObject(stub, (instance, state) => {
      expect(instance).toBeInstanceOf(RateLimiter);
      return state.storage.sql.exec("SELECT name, window_start, ends_at, used FROM counters ORDER BY name").toArray();
    });
    expect(rows).toEqual([
      { name: "x", window_start: x!.windowStart, ends_at: x!.windowStart + 60_000, used: 1 },
      { name: "y", window_start: y!.windowStart, ends_at: y!.windowStart + 86_400_000, used: 1 },
    ]);
    expect(y!.resetSeconds).toBe(86_400);
  });

  it("has an alarm pending at the earliest window end while counters exist", async () => {
    const stub = freshStub("alarm-pending");
    expect(await pendingAlarm(stub)).toBeNull();

    const minute = await stub.consume([{ name: "minute", amount: 5, windowSeconds: 60, durable: true }]);
    const minuteEnd = minute.counters[0]!.windowStart + 60_000;
    expect(await pendingAlarm(stub)).toBe(minuteEnd);

    // A later end leaves the alarm where it is.
    await stub.consume([{ name: "hour", amount: 5, windowSeconds: 3600, durable: true }]);
    expect(await pendingAlarm(stub)).toBe(minuteEnd);

    // An earlier end moves it forward.
    const second = await stub.consume([{ name: "second", amount: 5, windowSeconds: 1, durable: true }]);
    expect(await pendingAlarm(stub)).toBe(second.counters[0]!.windowStart + 1_000);
  });

  it("deletes ended windows when the alarm runs and schedules the next end", async () => {
    const stub = freshStub("alarm-delete");
    const live = await stub.consume([{ name: "live", amount: 5, windowSeconds: 60, durable: true }]);
    const liveStart = live.counters[0]!.windowStart;
    // A window that has ended but whose row is still stored (what the alarm is for).
    const endedStart = liveStart - 120_000;
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec(
        "INSERT INTO counters (name, window_start, ends_at, used) VALUES ('ended', ?, ?, 4)",
        endedStart,
        endedStart + 60_000,
      );
    });
    expect((await storedRows(stub)).map((row) => row.name)).toEqual(["ended", "live"]);

    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await storedRows(stub)).toEqual([{ name: "live", window_start: liveStart, ends_at: liveStart + 60_000, used: 1 }]);
    // The remaining counter keeps an alarm pending, at its end.
    expect(await pendingAlarm(stub)).toBe(liveStart + 60_000);
  });

  it("leaves no rows and no alarm once every window has ended", async () => {
    const stub = freshStub("alarm-empty");
    const result = await stub.consume([
      { name: "p", amount: 5, windowSeconds: 1, durable: true },
      { name: "q", amount: 5, windowSeconds: 1, durable: true },
    ]);
    expect(await pendingAlarm(stub)).toBe(result.counters[0]!.windowStart + 1_000);
    await sleep(1_100);

    // The alarm may already have fired on its own; either way, running it leaves nothing behind.
    await runDurableObjectAlarm(stub);
    expect(await storedRows(stub)).toEqual([]);
    expect(await pendingAlarm(stub)).toBeNull();

    // A new window after the clean-up schedules a new alarm.
    const again = await stub.consume([{ name: "p", amount: 5, windowSeconds: 60, durable: true }]);
    expect(again.counters[0]!.used).toBe(1);
    expect(await pendingAlarm(stub)).toBe(again.counters[0]!.windowStart + 60_000);
  });
});
