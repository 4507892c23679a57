import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { signAccessToken } from "../../src/auth/tokens";
import { newIdentity } from "./accounts";
import { apiWithVars, expectProblem } from "./http";

let next = 0;

/**
 * A client address no other test uses (198.18.0.0/15 is reserved for benchmarking), so that
 * each test starts with full buckets.
 */
export function freshIp(): string {
  const n = next++ + Math.floor(Math.random() * 1_000) * 1_000;
  return `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 0xff}.${n & 0xff}`;
}

/** An IPv6 /64 prefix (documentation range) no other test uses, as four groups. */
export function freshV6Prefix(): string {
  const group = () => Math.floor(Math.random() * 0xffff).toString(16);
  return `2001:db8:${group()}:${group()}`;
}

/** An access token of `userId` signed with `secret`, expiring at `expiresAt` (seconds). */
export function accessToken(userId: number, secret: string, expiresAt: number): Promise<string> {
  return signAccessToken(secret, { userId, sessionId: "rate-limit-test", issuedAtMs: Date.now() - 60_000, expiresAt });
}

export const inAMinute = () => Math.floor(Date.now() / 1000) + 60;

/** Bearer tokens that select no user (a request carrying one counts as anonymous), by what is wrong with them. */
export const TOKENS_OF_NO_USER: Array<[string, (userId: number) => Promise<string>]> = [
  ["a forged token (Bearer garbage)", async () => "garbage"],
  ["a token signed with another secret", (userId) => accessToken(userId, "not-the-test-secret-0123456789abcdef01234567", inAMinute())],
  ["an expired token of a real user", (userId) => accessToken(userId, env.AUTH_TOKEN_SECRET, Math.floor(Date.now() / 1000) - 1)],
];

/** The general write bucket's policy, which every auth write carries beside its own. */
export const GENERAL_WRITE = '"write-ip";q=120;w=60';

/**
 * The counter store's production patience (1 s before fail-open limits give up, 5 s for
 * fail-closed ones), for the tests of a store that does not answer in time.
 */
export const PRODUCTION_STORE_TIMEOUT = { RATE_LIMIT_STORE_TIMEOUT_MS: "1000" } as const;

// Hundreds of requests fired at once on a two-core machine can keep the isolate from reading the
// store's answer within 1 s; the limits would then rightly fail open, and a count of exactly 300
// of 301 would miss one. The counting tests are about exactness, so they wait longer.
const PATIENT_STORE = { RATE_LIMIT_STORE_TIMEOUT_MS: "15000" } as const;

/**
 * A request from `ip` with the request-rate limiters switched on (the suites run with them off).
 * The counter store is given 15 s unless `vars` says otherwise (`PRODUCTION_STORE_TIMEOUT`).
 */
export function limitedApi(
  ip: string,
  path: string,
  init: RequestInit = {},
  vars: Record<string, string> = PATIENT_STORE,
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("cf-connecting-ip", ip);
  return apiWithVars({ RATE_LIMITS_ENABLED: "true", ...vars }, path, { ...init, headers });
}

/** Sends `count` requests at once and returns their responses in order. */
export function fireTogether(count: number, send: (index: number) => Promise<Response>): Promise<Response[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => send(index)));
}

/** How many responses had each status, e.g. `{ 200: 300, 429: 1 }`. */
export function statusCounts(responses: Response[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

/** The counter-store object of one subject (`subjects` in src/rate-limits/client.ts). */
export function counterStore(subject: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));
}

/**
 * Takes the subject's `counters` table away for `work` and puts it back: every durable counter
 * (guards, hour and day windows) of that subject then fails, a real failure of the store rather
 * than a mock. The object is made to hold its table first, as it would after its first guard.
 */
export async function withBrokenTable<T>(subject: string, work: () => Promise<T>): Promise<T> {
  const store = counterStore(subject);
  await store.consume([{ name: "test-table-probe", amount: 1_000_000, windowSeconds: 3600, durable: true }]);
  await runInDurableObject(store, (_, state) => {
    state.storage.sql.exec("ALTER TABLE counters RENAME TO counters_offline");
  });
  try {
    return await work();
  } finally {
    await runInDurableObject(store, (_, state) => {
      state.storage.sql.exec("ALTER TABLE counters_offline RENAME TO counters");
    });
  }
}

/**
 * Keeps the subject's counter store from answering for `ms` (its input gate held shut), which is
 * how an overloaded or unreachable object looks to the Worker: calls to it time out. Memory
 * counters (minute request rates) can only fail this way. Returns once the stall has begun, with
 * a promise of its end.
 */
export async function stallStore(subject: string, ms: number): Promise<{ ended: Promise<void> }> {
  // The stall starts and ends inside the object. A test resumed from there (by a promise the
  // object resolves) would run on in the object's I/O context, where vitest can no longer cancel
  // the test's time-out timer: it fires later and fails on cross-object I/O. So the test waits for
  // both moments on timers of its own.
  let begun = false;
  let over = false;
  const stalled = runInDurableObject(counterStore(subject), (_, state) =>
    state.blockConcurrencyWhile(async () => {
      begun = true;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }),
  ).finally(() => (over = true));
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  const ended = until(() => over).then(() => stalled);
  await until(() => begun || over);
  return { ended };
}

// Request builders and readings of the HTTP tests.

/** A JSON POST body for `fetch`. */
export const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** A POST from `ip` with the request-rate limiters on. */
export const limitedPost = (ip: string, path: string, body: unknown) => limitedApi(ip, path, json(body));

/** An address no account uses and no other test asks about. */
export const unknownEmail = (prefix = "ghost") => newIdentity(prefix).email;

/** A path in the general read bucket. */
export const READ = "/v1/units";
/** A path in the general write bucket (POST). */
export const WRITE = "/v1/auth/validate-email";
/** A path in the general upload bucket (POST). */
export const UPLOAD = "/v1/products/1/images";
/**
 * A path in the export buckets: the one-product export, not built yet, so it answers 404 while
 * counting as an export (GET /v1/products/export would reach GET /v1/products/{id} until it is).
 */
export const EXPORT = "/v1/products/12/export";

/** A write from `ip` with the request-rate limiters on: `POST /v1/auth/validate-email`, which changes nothing. */
export function validateEmail(ip: string, headers: Record<string, string> = {}): Promise<Response> {
  return limitedApi(ip, WRITE, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email: "a@example.org" }),
  });
}

/** One policy's `r=` (remaining) and `t=` (seconds to reset) in a `RateLimit` header. */
export interface Reading {
  r: number;
  t: number;
}

/** The `RateLimit` header of a response, by policy name. */
export function readings(response: Response): Record<string, Reading> {
  const header = response.headers.get("ratelimit");
  if (header === null) throw new Error(`no RateLimit header (status ${response.status})`);
  const result: Record<string, Reading> = {};
  for (const item of header.split(", ")) {
    const match = /^"([a-z-]+)";r=(\d+);t=(\d+)$/.exec(item);
    if (!match) throw new Error(`malformed RateLimit item: ${item}`);
    result[match[1]!] = { r: Number(match[2]), t: Number(match[3]) };
  }
  return result;
}

/** `r=` of one policy in the `RateLimit` header. */
export function remaining(response: Response, policy: string): number {
  const reading = readings(response)[policy];
  if (!reading) throw new Error(`no "${policy}" in RateLimit: ${response.headers.get("ratelimit")}`);
  return reading.r;
}

/** Asserts the one refused response of a boundary run: 429 Problem Details, `Retry-After` = `t=`, `r=0`. */
export async function expectRefused(response: Response, policy: string, amount: number): Promise<void> {
  await expectProblem(response, 429, "RATE_LIMITED");
  const retryAfter = response.headers.get("retry-after");
  expect(retryAfter).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(response.headers.get("ratelimit-policy")).toBe(`"${policy}";q=${amount};w=60`);
  expect(response.headers.get("ratelimit")).toBe(`"${policy}";r=0;t=${seconds}`);
}

/** Asserts a 429 `RATE_LIMITED` with exactly `policy` as `RateLimit-Policy`, and returns its `Retry-After` in seconds. */
export async function expectRateLimited(response: Response, policy: string): Promise<number> {
  await expectProblem(response, 429, "RATE_LIMITED");
  expect(response.headers.get("ratelimit-policy")).toBe(policy);
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  return retryAfter;
}

/** The single 429 among `responses`. */
export function theRefused(responses: Response[]): Response {
  const refused = responses.filter((response) => response.status === 429);
  expect(refused).toHaveLength(1);
  return refused[0]!;
}

// The counter-store object itself (test/durable-objects).

/** A counter-store object no other test touches. */
export function freshStub(label: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`rate-limiter-test:${label}:${crypto.randomUUID()}`));
}

/** A counter-store object's stub. */
export type Stub = ReturnType<typeof freshStub>;

/** A row of a counter-store object's `counters` table (its durable counters). */
export interface StoredRow extends Record<string, SqlStorageValue> {
  name: string;
  window_start: number;
  ends_at: number;
  used: number;
}

/** The durable counters an object holds, by name. */
export function storedRows(stub: Stub): Promise<StoredRow[]> {
  return runInDurableObject(stub, (_, state) =>
    state.storage.sql.exec<StoredRow>("SELECT name, window_start, ends_at, used FROM counters ORDER BY name").toArray(),
  );
}

/** When the object's clean-up alarm is due, if one is set. */
export function pendingAlarm(stub: Stub): Promise<number | null> {
  return runInDurableObject(stub, (_, state) => state.storage.getAlarm());
}

/** Waits `ms` (to let a one-second window end). */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
