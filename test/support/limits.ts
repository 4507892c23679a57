import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { apiWithVars } from "./http";

let next = 0;

/**
 * A client address no other test uses (198.18.0.0/15 is reserved for benchmarking), so that
 * each test starts with full buckets.
 */
export function freshIp(): string {
  const n = next++ + Math.floor(Math.random() * 1_000) * 1_000;
  return `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 0xff}.${n & 0xff}`;
}

/** A request from `ip` with the request-rate limiters switched on (the suites run with them off). */
export function limitedApi(ip: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("cf-connecting-ip", ip);
  return apiWithVars({ RATE_LIMITS_ENABLED: "true" }, path, { ...init, headers });
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

/** The counter-store object of one subject (`subjects` in src/services/rate-limiter.ts). */
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
  let begun!: () => void;
  const started = new Promise<void>((resolve) => (begun = resolve));
  const ended = runInDurableObject(counterStore(subject), (_, state) =>
    state.blockConcurrencyWhile(async () => {
      begun();
      await new Promise((resolve) => setTimeout(resolve, ms));
    }),
  );
  await started;
  return { ended };
}
