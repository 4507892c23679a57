import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger";
import { ApiError } from "../../src/lib/problem";
import { createLimiter, enforceLimits, LimiterUnavailable, rateLimited, rateLimitHeaders, subjects } from "../../src/rate-limits/client";
import type { CounterReading } from "../../src/rate-limits/object";
import { LIMITS, type LimitName } from "../../src/rate-limits/policy";
import { stallStore, withBrokenTable } from "../support/limits";

function reading(name: LimitName, overrides: Partial<CounterReading> = {}): CounterReading {
  const { amount, windowSeconds } = LIMITS[name];
  return {
    name,
    amount,
    windowSeconds,
    used: 0,
    remaining: amount,
    resetSeconds: windowSeconds,
    windowStart: 0,
    exhausted: false,
    ...overrides,
  };
}

/** A subject no other test uses. */
const freshSubject = (label: string) => `ip:test-${label}-${crypto.randomUUID()}`;

function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({}, (_, line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  return { log, lines };
}

describe("rateLimitHeaders", () => {
  it("describes one counter", () => {
    expect(rateLimitHeaders([reading("read-ip", { used: 12, remaining: 288, resetSeconds: 34 })])).toEqual({
      "RateLimit-Policy": '"read-ip";q=300;w=60',
      RateLimit: '"read-ip";r=288;t=34',
    });
  });

  it("lists two counters in order, comma-separated", () => {
    const counters = [
      reading("write-ip", { used: 120, remaining: 0, resetSeconds: 7 }),
      reading("register-ip", { used: 2, remaining: 3, resetSeconds: 3599 }),
    ];
    expect(rateLimitHeaders(counters)).toEqual({
      "RateLimit-Policy": '"write-ip";q=120;w=60, "register-ip";q=5;w=3600',
      RateLimit: '"write-ip";r=0;t=7, "register-ip";r=3;t=3599',
    });
  });
});

describe("rateLimited", () => {
  it("is a 429 RATE_LIMITED with Retry-After of the longest wait among the spent counters", () => {
    const counters = [
      reading("write-ip", { used: 120, remaining: 0, resetSeconds: 12, exhausted: true }),
      // Not spent: its longer wait does not count.
      reading("register-ip", { used: 1, remaining: 4, resetSeconds: 3000, exhausted: false }),
      reading("login-ip", { used: 60, remaining: 0, resetSeconds: 45, exhausted: true }),
    ];
    const error = rateLimited(counters);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(429);
    expect(error.code).toBe("RATE_LIMITED");
    expect(error.title).toBe("Too Many Requests");
    expect(error.message).toBe('Too many requests: the limit "write-ip" allows 120 per minute. Retry in 45 s.');
    expect(error.headers).toEqual({
      "Retry-After": "45",
      "RateLimit-Policy": '"write-ip";q=120;w=60, "register-ip";q=5;w=3600, "login-ip";q=60;w=60',
      RateLimit: '"write-ip";r=0;t=12, "register-ip";r=4;t=3000, "login-ip";r=0;t=45',
    });
  });

  it("names the window of hour- and day-long limits", () => {
    expect(rateLimited([reading("verify-ip", { remaining: 0, resetSeconds: 100, exhausted: true })]).message).toBe(
      'Too many requests: the limit "verify-ip" allows 3 per hour. Retry in 100 s.',
    );
    expect(rateLimited([reading("wrong-secret-day", { remaining: 0, resetSeconds: 86_000, exhausted: true })]).headers["Retry-After"]).toBe(
      "86000",
    );
  });
});

describe("subjects", () => {
  it("keys IPs by ipLimitKey, users by id, emails by a keyed digest", () => {
    expect(subjects.ip("192.0.2.1")).toBe("ip:192.0.2.1");
    expect(subjects.ip("2001:db8:1:2::3")).toBe("ip:2001:db8:1:2::/64");
    expect(subjects.ip(null)).toBe("ip:unknown");
    expect(subjects.user(17)).toBe("user:17");
    const digest = subjects.email("secret-one", "someone@example.com");
    expect(digest).toMatch(/^email:/);
    expect(digest).not.toContain("someone");
    expect(subjects.email("secret-one", "someone@example.com")).toBe(digest);
    expect(subjects.email("secret-two", "someone@example.com")).not.toBe(digest);
  });
});

describe("createLimiter", () => {
  it("consumes and refunds through the counter store", async () => {
    const limiter = createLimiter(env.RATE_LIMITER);
    const subject = freshSubject("round-trip");

    const first = await limiter.consume(subject, ["failed-login"]);
    expect(first.allowed).toBe(true);
    expect(first.counters).toEqual([
      {
        name: "failed-login",
        amount: 3,
        windowSeconds: 60,
        durable: true,
        used: 1,
        remaining: 2,
        resetSeconds: 60,
        windowStart: first.counters[0]!.windowStart,
        exhausted: false,
      },
    ]);
    const second = await limiter.consume(subject, ["failed-login"]);
    expect(second.counters[0]!.used).toBe(2);

    await limiter.refund(subject, second.counters);
    const third = await limiter.consume(subject, ["failed-login"]);
    expect(third.counters[0]).toMatchObject({ used: 2, remaining: 1, windowStart: first.counters[0]!.windowStart });
  });

  it("remembers a spent request-rate counter and refuses without asking the store", async () => {
    const limiter = createLimiter(env.RATE_LIMITER);
    const subject = freshSubject("memory");
    // Spend read-ip (300 per minute), in batches that stay well inside the store's time-out.
    for (let batch = 0; batch < 15; batch++) {
      const results = await Promise.all(Array.from({ length: 20 }, () => limiter.consume(subject, ["read-ip"])));
      expect(results.every((result) => result.allowed)).toBe(true);
    }
    const refused = await limiter.consume(subject, ["read-ip"]);
    expect(refused.allowed).toBe(false);
    const spent = refused.counters[0]!;
    expect(spent).toMatchObject({ name: "read-ip", used: 300, remaining: 0, exhausted: true });

    // The spent counter is answered from memory, with the store's window, without a store call.
    const callsBefore = limiter.calls;
    const remembered = await limiter.consume(subject, ["read-ip"]);
    expect(limiter.calls).toBe(callsBefore);
    expect(remembered.allowed).toBe(false);
    expect(remembered.counters).toHaveLength(1);
    expect(remembered.counters[0]).toMatchObject({
      name: "read-ip",
      amount: 300,
      windowSeconds: 60,
      used: 300,
      remaining: 0,
      windowStart: spent.windowStart,
      exhausted: true,
    });
    expect(remembered.counters[0]!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(remembered.counters[0]!.resetSeconds).toBeLessThanOrEqual(60);

    // So does a limiter built for a later request of the same isolate.
    const later = createLimiter(env.RATE_LIMITER);
    expect((await later.consume(subject, ["read-ip", "write-ip"])).allowed).toBe(false);
    expect(later.calls).toBe(0);
  });

  it("does not remember spent guards: a broken store is LimiterUnavailable", async () => {
    const limiter = createLimiter(env.RATE_LIMITER);
    const subject = freshSubject("guard");
    for (let i = 0; i < 3; i++) expect((await limiter.consume(subject, ["failed-login"])).allowed).toBe(true);
    const refused = await limiter.consume(subject, ["failed-login"]);
    expect(refused.allowed).toBe(false);
    expect(refused.counters[0]).toMatchObject({ name: "failed-login", used: 3, exhausted: true });

    await withBrokenTable(subject, async () => {
      const error = await limiter.consume(subject, ["failed-login"]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LimiterUnavailable);
      expect((error as LimiterUnavailable).message).toBe("the counter store failed");
      await expect(limiter.refund(subject, refused.counters)).rejects.toBeInstanceOf(LimiterUnavailable);
    });

    // Restored: the store answers again.
    expect((await limiter.consume(subject, ["failed-login"])).allowed).toBe(false);
  });
});

describe("enforceLimits", () => {
  it("returns the decision of an allowed request", async () => {
    const { log, lines } = recordingLogger();
    const subject = freshSubject("enforce-allowed");
    const decision = await enforceLimits({ limiter: createLimiter(env.RATE_LIMITER), log }, subject, ["write-ip", "login-ip"]);
    expect(decision?.allowed).toBe(true);
    expect(decision?.counters.map((c) => [c.name, c.used])).toEqual([
      ["write-ip", 1],
      ["login-ip", 1],
    ]);
    expect(lines).toEqual([]);
  });

  it("throws 429 and audits a refused request", async () => {
    const { log, lines } = recordingLogger();
    const limiter = createLimiter(env.RATE_LIMITER);
    const subject = freshSubject("enforce-refused");
    for (let i = 0; i < 3; i++) await enforceLimits({ limiter, log }, subject, ["verify-ip"]);
    const error = await enforceLimits({ limiter, log }, subject, ["verify-ip"], { userId: 9 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    expect((error as ApiError).code).toBe("RATE_LIMITED");
    expect((error as ApiError).headers["RateLimit-Policy"]).toBe('"verify-ip";q=3;w=3600');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "info",
      msg: "audit",
      event: "rate_limit.exceeded",
      limits: "verify-ip",
      subject: "ip",
      user_id: 9,
    });
  });

  it("lets a request through when the store does not answer in time and every limit fails open", async () => {
    const { log, lines } = recordingLogger();
    const subject = freshSubject("enforce-open");
    const limiter = createLimiter(env.RATE_LIMITER);
    const stall = await stallStore(subject, 1_500);
    const result = await enforceLimits({ limiter, log }, subject, ["read-ip"]);
    await stall.ended;
    expect(result).toBeNull();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", msg: "rate limiter unavailable", limits: "read-ip", fails: "open" });
    expect(lines[0]!.error).toMatchObject({ name: "LimiterUnavailable", message: "the counter store did not answer in time" });
  });

  it("throws 503 AUTH_STORE_UNAVAILABLE when the store fails and any limit fails closed", async () => {
    const { log, lines } = recordingLogger();
    const subject = freshSubject("enforce-closed");
    const limiter = createLimiter(env.RATE_LIMITER);
    const error = await withBrokenTable(subject, () =>
      enforceLimits({ limiter, log }, subject, ["write-ip", "register-ip"]).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect((error as ApiError).code).toBe("AUTH_STORE_UNAVAILABLE");
    expect((error as ApiError).headers).toEqual({ "Retry-After": "5" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", msg: "rate limiter unavailable", limits: "write-ip,register-ip", fails: "closed" });

    // A guard alone fails closed too.
    const guardError = await withBrokenTable(subject, () =>
      enforceLimits({ limiter, log }, subject, ["failed-login"]).catch((e: unknown) => e),
    );
    expect((guardError as ApiError).status).toBe(503);
    expect((guardError as ApiError).code).toBe("AUTH_STORE_UNAVAILABLE");
  });

  it("waits longer before giving up on limits that fail closed than on those that fail open", async () => {
    const { log } = recordingLogger();
    const subject = freshSubject("enforce-patience");
    const limiter = createLimiter(env.RATE_LIMITER);
    // A store that answers after 2 s: too late for a read (1 s), in time for a sign-in (5 s).
    let stall = await stallStore(subject, 2_000);
    expect(await enforceLimits({ limiter, log }, subject, ["read-ip"])).toBeNull();
    await stall.ended;
    stall = await stallStore(subject, 2_000);
    const decision = await enforceLimits({ limiter, log }, subject, ["write-ip", "login-ip"]);
    await stall.ended;
    expect(decision?.allowed).toBe(true);
  }, 20_000);
});
