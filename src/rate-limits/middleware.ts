import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import { presentedClaims } from "../middleware/authenticate";
import { handoverOf } from "../middleware/handover";
import { enforceLimits, rateLimited, rateLimitHeaders, subjects } from "./client";
import type { CounterReading } from "./object";
import { planRequestLimits } from "./policy";

/**
 * The request-rate limiters of `/v1`: counts the request in its general bucket (and an
 * authentication route's own IP limit) before anything else runs, and stamps `RateLimit` /
 * `RateLimit-Policy` on the response. A correctly signed, unexpired access token selects the
 * per-user bucket without a database read; revocation is checked by the routes that act on the
 * identity. Off when `RATE_LIMITS_ENABLED=false`.
 */
export const requestRateLimits = createMiddleware<AppEnv>(async (c, next) => {
  const services = c.get("services");
  const { config, limiter } = services;
  if (!config.rateLimitsEnabled) return next();
  const handover = handoverOf(c.req.raw);
  if (handover) {
    // The fast lane counted this request already.
    if (handover.refusal !== undefined) throw handover.refusal;
    await next();
    if (handover.limits) stampRateLimits(writableHeaders(c), handover.limits.counters);
    return;
  }

  const userId = (await presentedClaims(c))?.claims.userId ?? null;
  const plan = planRequestLimits(c.req.method, c.req.path, userId);
  const calls = [
    ...(plan.ip.length > 0 ? [{ subject: subjects.ip(c.get("clientIp")), names: plan.ip }] : []),
    ...(plan.user.length > 0 && userId !== null ? [{ subject: subjects.user(userId), names: plan.user }] : []),
  ];
  // With two subjects, a refusal by one is refunded by the other (below), which can free a unit
  // this isolate would otherwise remember as spent; so only single-subject refusals are remembered,
  // and a remembered one spares the other subject its call.
  for (const call of calls) {
    const remembered = calls.length > 1 ? limiter.remembered(call.subject, call.names) : null;
    if (remembered) throw rateLimited(remembered.counters);
  }
  const remember = calls.length === 1;
  const settled = await Promise.allSettled(calls.map((call) => enforceLimits(services, call.subject, call.names, { userId, remember })));
  const refusal = settled.find((outcome) => outcome.status === "rejected");
  if (refusal) {
    // Counted in parallel: what one subject counted for a request the other refused is given
    // back, so that a refused request costs nothing anywhere.
    await Promise.all(
      settled.map(async (outcome, i) => {
        if (outcome.status !== "fulfilled" || !outcome.value) return;
        try {
          await limiter.refund(calls[i]!.subject, outcome.value.counters);
        } catch (error) {
          services.log.warn("rate limit refund failed", { limits: calls[i]!.names.join(","), error });
        }
      }),
    );
    throw refusal.reason;
  }
  const decisions = settled.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : null));

  await next();

  stampRateLimits(
    writableHeaders(c),
    decisions.flatMap((decision) => decision?.counters ?? []),
  );
});

/** `RateLimit` and `RateLimit-Policy` for the counters a request was counted in (by this middleware, or by the fast lane before it handed the request over). */
function stampRateLimits(headers: Headers, counters: readonly CounterReading[]): void {
  // A 429 from a guard further in already names the policy that refused it.
  if (counters.length > 0 && !headers.has("RateLimit")) {
    for (const [name, value] of Object.entries(rateLimitHeaders(counters))) headers.set(name, value);
  }
}
