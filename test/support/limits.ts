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
