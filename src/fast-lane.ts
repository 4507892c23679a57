import type { LimitDecision, Services } from "./container";
import { batchRows } from "./db/client";
import { planRequestLimits } from "./lib/rate-limits";
import { presentedAccessToken } from "./middleware/authenticate";
import { bootstrapped } from "./middleware/bootstrap";
import { cacheKey, copyAnswer, forgetRecentCopy, type RecentCopy, recentCopy } from "./middleware/cached-read";
import { isAllowedOrigin, stampCors } from "./middleware/cors";
import { type BegunRequest, handOver } from "./middleware/handover";
import { stampRateLimits } from "./middleware/rate-limit";
import { beginRequest, finishRequest } from "./middleware/request-context";
import { BOOKMARK_HEADER, responseBookmark, servicesForRequest } from "./middleware/request-services";
import { stampSecurityHeaders } from "./middleware/security-headers";
import type { Plugin } from "./plugin";
import { subjects, takeHeldUnit } from "./services/rate-limiter";
import { generationFrom, validatorStatement } from "./services/read-cache";

const LIVE_BODY = JSON.stringify({ status: "alive" });

/** What the fast lane serves: the probe, or a copy in memory with its key. */
type Errand = { kind: "live"; path: string } | { kind: "copy"; path: string; key: string; copy: RecentCopy };

/** The app the fast lane gives a request to when it cannot serve it itself. */
export type SlowLane = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/**
 * The fast lane (docs/architecture.md "The fast lane"): the hottest anonymous reads answered
 * without the framework, with exactly the answer, headers and log line the app would give.
 * It serves `/live`, and a public read whose copy this isolate keeps in memory
 * (middleware/cached-read.ts) once its validator, in the request's D1 session, says the copy is
 * current. It counts the request's rate limit only from units this isolate already holds (no
 * counter-store call, no refusal to answer) and serves nothing before the bootstrap run
 * succeeded. Anything else (a signed-in request, a body, a percent-encoded path, a configuration
 * error, no held unit) goes to `slow` untouched; a copy found out of date goes to `slow` with
 * what the lane did so far (middleware/handover.ts), so it is neither counted nor read twice.
 *
 * Hono builds a context, composes twelve middleware and merges every header through
 * `Headers.set`; on a cached read that is about a fifth of the request's CPU time (bench/README.md,
 * Issue 24), which this path does not spend.
 */
export function fastLane(plugins: readonly Plugin[], slow: SlowLane): SlowLane {
  return (request, env, ctx) => {
    const errand = errandOf(request, env);
    return errand === null ? slow(request, env, ctx) : serve(errand, request, env, ctx, plugins, slow);
  };
}

function errandOf(request: Request, env: Env): Errand | null {
  if (request.method !== "GET" || request.body !== null) return null;
  const headers = request.headers;
  if (presentedAccessToken(headers.get("authorization") ?? undefined, headers.get("cookie") ?? undefined) !== null) return null;
  if (!bootstrapped(env.DB)) return null;
  const url = new URL(request.url);
  // Hono decodes such paths; the lane leaves them to it rather than decode them its own way.
  if (url.pathname.includes("%")) return null;
  if (url.pathname === "/live") return url.search === "" ? { kind: "live", path: url.pathname } : null;
  if (!url.pathname.startsWith("/v1/")) return null;
  for (const viewer of ["anonymous", "everyone"] as const) {
    const key = cacheKey(url, viewer);
    const copy = recentCopy(key);
    if (copy) return { kind: "copy", path: url.pathname, key, copy };
  }
  return null;
}

async function serve(
  errand: Errand,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  plugins: readonly Plugin[],
  slow: SlowLane,
): Promise<Response> {
  const begun = beginRequest(request.headers.get("x-request-id"), request.headers.get("cf-connecting-ip"));
  let services: Services;
  try {
    services = servicesForRequest(env, request.headers, request.method, {
      log: begun.log,
      defer: (work) => ctx.waitUntil(work),
      plugins,
    });
  } catch {
    // A configuration error: the app answers it (a 500 that names it).
    return slow(request, env, ctx);
  }
  const { path } = errand;
  if (errand.kind === "live") {
    return finish(request, path, begun, services, null, { status: 200, body: LIVE_BODY, headers: { "Content-Type": "application/json" } });
  }

  let limits: LimitDecision | null = null;
  if (services.config.rateLimitsEnabled) {
    const names = planRequestLimits("GET", path, null).ip;
    if (names.length > 0) {
      limits = takeHeldUnit(subjects.ip(begun.clientIp), names);
      // Counting it needs the counter store, and may refuse: the app's to do.
      if (limits === null) return slow(request, env, ctx);
    }
  }

  const { copy, key } = errand;
  let generation: string | null = null;
  try {
    const [rows] = await batchRows<[unknown]>(services.db, [validatorStatement(copy.scope, copy.recordId)]);
    generation = generationFrom(rows);
  } catch {
    // Out of date as far as the lane knows: the app reads again and answers what it finds.
  }
  if (generation !== copy.generation) {
    forgetRecentCopy(key);
    handOver(request, { ...begun, services, limits, staleKey: key });
    return slow(request, env, ctx);
  }
  return finish(request, path, begun, services, limits, copyAnswer(copy, request.headers.get("if-none-match")));
}

/** The lane's answer, with the headers and the log line the app's middleware gives every response. */
function finish(
  request: Request,
  path: string,
  begun: BegunRequest,
  services: Services,
  limits: LimitDecision | null,
  answer: { status: number; body: BodyInit | null; headers: Record<string, string> },
): Response {
  const headers = new Headers(answer.headers);
  if (limits) stampRateLimits(headers, limits.counters);
  const origin = request.headers.get("origin");
  stampCors(headers, origin !== null && isAllowedOrigin(origin, services.config.corsOrigins, request.url) ? origin : null);
  const bookmark = responseBookmark(services, request.headers.get(BOOKMARK_HEADER) ?? undefined);
  if (bookmark !== null) headers.set(BOOKMARK_HEADER, bookmark);
  stampSecurityHeaders(headers, answer.status, services.config.isProduction);
  finishRequest(headers, begun, { method: request.method, path, status: answer.status, services, lane: "fast" });
  return new Response(answer.body, { status: answer.status, headers });
}
