import { keyedDigest } from "../auth/tokens";
import type { LimitDecision, Limiter, Services } from "../container";
import { audit } from "../lib/audit";
import { ipLimitKey } from "../lib/client-ip";
import type { Logger } from "../lib/logger";
import { ApiError, authStoreUnavailable } from "../lib/problem";
import { LeaseBook } from "./leases";
import type { CounterReading, RateLimiter, StoreFailure } from "./object";
import { failsClosed, isDurable, LIMITER_TIMEOUT_MS, LIMITS, type LimitName, type LimitSpec } from "./policy";

/** The counter store did not answer (an error, or no answer within its time-out). */
export class LimiterUnavailable extends Error {
  override name = "LimiterUnavailable";
}

/** Counter subjects: one Durable Object each. */
export const subjects = {
  ip: (clientIp: string | null) => `ip:${ipLimitKey(clientIp)}`,
  user: (userId: number) => `user:${userId}`,
  /** A keyed digest, so that the counter store never holds an address. */
  email: (secret: string, canonical: string) => `email:${keyedDigest(secret, canonical)}`,
  pairingCode: (code: string) => `pairing-code:${code}`,
  camera: (cameraId: string) => `camera:${cameraId}`,
};

// A spent request-rate counter stays spent until its window ends (refused calls count nothing),
// so this isolate can refuse further requests itself until then: a flood from one client then
// costs no counter-store calls. Guards are left out: their refunds can free a unit early.
const blockedUntil = new Map<string, number>();
const BLOCK_MEMORY_ENTRIES = 10_000;

function rememberBlocks(subject: string, counters: readonly CounterReading[]): void {
  if (blockedUntil.size >= BLOCK_MEMORY_ENTRIES) {
    const now = Date.now();
    for (const [key, until] of blockedUntil) if (until <= now) blockedUntil.delete(key);
    if (blockedUntil.size >= BLOCK_MEMORY_ENTRIES) blockedUntil.clear();
  }
  for (const counter of counters) {
    if (counter.exhausted && LIMITS[counter.name as LimitName].kind === "request") {
      blockedUntil.set(`${subject} ${counter.name}`, counter.windowStart + counter.windowSeconds * 1000);
    }
  }
}

function rememberedBlock(subject: string, names: readonly LimitName[]): LimitDecision | null {
  const now = Date.now();
  const counters: CounterReading[] = [];
  for (const name of names) {
    const until = blockedUntil.get(`${subject} ${name}`);
    if (until === undefined) continue;
    if (until <= now) {
      blockedUntil.delete(`${subject} ${name}`);
      continue;
    }
    const { amount, windowSeconds } = LIMITS[name];
    counters.push({
      name,
      amount,
      windowSeconds,
      used: amount,
      remaining: 0,
      resetSeconds: Math.max(1, Math.ceil((until - now) / 1000)),
      windowStart: until - windowSeconds * 1000,
      exhausted: true,
    });
  }
  return counters.length > 0 ? { allowed: false, counters, remembered: true } : null;
}

// Units of request-rate counters this isolate took ahead of use (src/rate-limits/leases.ts).
const leases = new LeaseBook();
const LEASE_CAP = 16;

/**
 * How many units one store call may take ahead for `names`, or 1 for no lease. Only minute
 * request rates that fail open qualify (the general buckets): guards and authentication limits
 * fail closed or are refunded, and are counted one request at a time. At most a twentieth of the
 * smallest limit, so that units held by other isolates cost a client little.
 */
function leaseCap(names: readonly LimitName[]): number {
  let cap = LEASE_CAP;
  for (const name of names) {
    const spec: LimitSpec = LIMITS[name];
    if (spec.kind !== "request" || spec.onStoreFailure !== "open" || isDurable(name)) return 1;
    cap = Math.min(cap, Math.floor(spec.amount / 20));
  }
  return Math.max(1, cap);
}

/** Forgets the units this isolate holds ahead (they stay counted in the store until their windows end). */
export function forgetLimitLeases(): void {
  leases.clear();
}

async function withinTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LimiterUnavailable("the counter store did not answer in time")), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } catch (error) {
    throw error instanceof LimiterUnavailable ? error : new LimiterUnavailable("the counter store failed", { cause: error });
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** The object's answer, or LimiterUnavailable when its storage failed (it answers that as a value). */
function storeAnswer<T extends Partial<StoreFailure> | null>(answer: T): T {
  if (typeof answer?.failed === "string") {
    throw new LimiterUnavailable("the counter store failed", { cause: new Error(answer.failed) });
  }
  return answer;
}

/**
 * Wraps the `RATE_LIMITER` namespace; cheap enough to build per request. `failOpenMs` is how long
 * a call for fail-open limits waits (`RATE_LIMIT_STORE_TIMEOUT_MS`); fail-closed calls wait at
 * least `LIMITER_TIMEOUT_MS.failClosed`.
 */
export function createLimiter(namespace: DurableObjectNamespace<RateLimiter>, failOpenMs: number = LIMITER_TIMEOUT_MS.failOpen): Limiter {
  const failClosedMs = Math.max(LIMITER_TIMEOUT_MS.failClosed, failOpenMs);
  let calls = 0;
  const stub = (subject: string) => {
    calls += 1;
    return namespace.get(namespace.idFromName(subject));
  };
  return {
    get calls() {
      return calls;
    },
    remembered: rememberedBlock,
    async consume(subject, names, { remember = true } = {}) {
      // A refusal may be refunded by another subject's counter (remember: false): one unit at a time then.
      const cap = remember ? leaseCap(names) : 1;
      const key = `${subject} ${names.join(",")}`;
      // Units held here were counted by the store already: they are served even once it is spent.
      const held = cap > 1 ? leases.take(key, Date.now()) : null;
      if (held) return { allowed: true, counters: held };
      const remembered = rememberedBlock(subject, names);
      if (remembered) return remembered;
      const specs = names.map((name) => ({
        name,
        amount: LIMITS[name].amount,
        windowSeconds: LIMITS[name].windowSeconds,
        durable: isDurable(name),
      }));
      const units = cap > 1 ? leases.units(key, Date.now(), cap) : 1;
      const result = storeAnswer(await withinTimeout(stub(subject).consume(specs, units), failsClosed(names) ? failClosedMs : failOpenMs));
      if (!result.allowed) {
        // Concurrent calls may have been granted more than they needed while this one waited.
        const granted = cap > 1 ? leases.take(key, Date.now()) : null;
        if (granted) return { allowed: true, counters: granted };
        if (remember) rememberBlocks(subject, result.counters);
        return result;
      }
      if (cap === 1) return result;
      return { allowed: true, counters: leases.add(key, result.counters, result.granted ?? 1, Date.now(), cap) };
    },
    async refund(subject, counters) {
      const units = counters.map(({ name, windowStart, durable }) => ({ name, windowStart, durable }));
      storeAnswer(await withinTimeout(stub(subject).refund(units), failClosedMs));
    },
  };
}

/** `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers) for the counters a response answers to. */
export function rateLimitHeaders(counters: readonly CounterReading[]): Record<string, string> {
  return {
    "RateLimit-Policy": counters.map((c) => `"${c.name}";q=${c.amount};w=${c.windowSeconds}`).join(", "),
    RateLimit: counters.map((c) => `"${c.name}";r=${c.remaining};t=${c.resetSeconds}`).join(", "),
  };
}

/** 429 with `Retry-After`: the seconds until every spent counter has a unit again. */
export function rateLimited(counters: readonly CounterReading[]): ApiError {
  const spent = counters.filter((counter) => counter.exhausted);
  const retryAfter = Math.max(...spent.map((counter) => counter.resetSeconds));
  const first = spent[0]!;
  return new ApiError(429, {
    code: "RATE_LIMITED",
    detail:
      `Too many requests: the limit "${first.name}" allows ${first.amount} per ${describeWindow(first.windowSeconds)}. ` +
      `Retry in ${retryAfter} s.`,
    headers: { "Retry-After": String(retryAfter), ...rateLimitHeaders(counters) },
  });
}

function describeWindow(seconds: number): string {
  if (seconds === 60) return "minute";
  if (seconds === 3600) return "hour";
  if (seconds === 86_400) return "day";
  return `${seconds} s`;
}

/**
 * Counts one request against `names` of `subject`. Refused: audits and throws 429. Store
 * unreachable: throws 503 if any of the limits fails closed, otherwise logs and returns null so
 * the request goes on unlimited (the application limiters fail open).
 */
export async function enforceLimits(
  svc: Pick<Services, "limiter" | "log">,
  subject: string,
  names: readonly LimitName[],
  context: { userId?: number | null; remember?: boolean } = {},
): Promise<LimitDecision | null> {
  let decision: LimitDecision;
  try {
    decision = await svc.limiter.consume(subject, names, { remember: context.remember ?? true });
  } catch (error) {
    const closed = failsClosed(names);
    svc.log.error("rate limiter unavailable", { limits: names.join(","), fails: closed ? "closed" : "open", error });
    if (closed) throw authStoreUnavailable();
    return null;
  }
  if (!decision.allowed) {
    // A flood answered from memory is audited once, when the store first refused it.
    if (!decision.remembered) auditRefusal(svc.log, subject, decision, context.userId ?? null);
    throw rateLimited(decision.counters);
  }
  return decision;
}

/** Audits a refusal: the limits and the kind of subject, never the subject itself (an IP or a digest). */
export function auditRefusal(log: Logger, subject: string, decision: LimitDecision, userId: number | null): void {
  audit(log, "rate_limit.exceeded", {
    limits: decision.counters
      .filter((c) => c.exhausted)
      .map((c) => c.name)
      .join(","),
    subject: subject.slice(0, subject.indexOf(":")),
    user_id: userId,
  });
}
