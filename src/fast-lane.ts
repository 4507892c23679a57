import { LRUCache } from "lru-cache";
import type { AppConfig } from "./config";
import type { LimitDecision, Services } from "./container";
import { batchRows } from "./db/client";
import { planRequestLimits } from "./lib/rate-limits";
import { presentedAccessToken } from "./middleware/authenticate";
import { bootstrapped } from "./middleware/bootstrap";
import { cacheKey, copyAnswer, forgetRecentCopy, recentCopy } from "./middleware/cached-read";
import { allowedOriginHeaders, isAllowedOrigin } from "./middleware/cors";
import { type BegunRequest, handOver } from "./middleware/handover";
import { type Answered, beginRequest, logRequest, serverTiming } from "./middleware/request-context";
import { BOOKMARK_HEADER, responseBookmark, servicesForRequest } from "./middleware/request-services";
import { securityHeaderPairs } from "./middleware/security-headers";
import type { Plugin } from "./plugin";
import { limiterCalls } from "./services/build-services";
import { enforceLimits, rateLimitHeaders, subjects } from "./services/rate-limiter";
import { generationFrom, validatorStatement } from "./services/read-cache";

/** The app the fast lane gives a request to when it does not answer it itself. */
export type Lane = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/** Where a URL goes in the lane: `/live`, or a read whose copies are kept under `keys` (one per viewer class an anonymous request is in). */
type Target = { kind: "live"; path: string } | { kind: "read"; path: string; keys: readonly string[] } | { kind: "none" };
const NONE: Target = { kind: "none" };

// What each URL lately asked for is (its path and cache keys), so that a hot read does not parse
// and sort its query again; NONE for a URL the lane never serves.
const targets = new LRUCache<string, Target>({ max: 4096 });

const LIVE_BODY = JSON.stringify({ status: "alive" });

/**
 * The fast lane (docs/architecture.md "The fast lane"): `/live` and the anonymous public reads
 * whose copy this isolate keeps in memory (middleware/cached-read.ts), answered without the
 * framework but with exactly the app's answer, headers and access log line, from the same
 * functions. A copy is served once its validator, in the request's D1 session, says it is current,
 * and after the request was counted in its rate limit as the app counts it. Nothing is served
 * before the bootstrap run succeeded. Anything else (a signed-in request, a body, a percent-encoded
 * path, a configuration error) goes to `slow` untouched; a copy found out of date, or a request the
 * rate limit refused, goes to `slow` with what the lane did so far (middleware/handover.ts), so
 * it is neither counted nor read twice and its error is the app's.
 *
 * Hono makes a context, composes a dozen middleware and writes every header through
 * `Headers.set`; on a cached read that was about a fifth of the request's CPU time
 * (bench/README.md, Issue 24).
 */
export function fastLane(plugins: readonly Plugin[], slow: Lane): Lane {
  return (request, env, ctx) => {
    if (request.method !== "GET" || request.body !== null) return slow(request, env, ctx);
    const headers = request.headers;
    if (presentedAccessToken(headers.get("authorization") ?? undefined, headers.get("cookie") ?? undefined) !== null) {
      return slow(request, env, ctx);
    }
    const target = targetOf(request.url);
    if (target.kind === "none" || !bootstrapped(env.DB)) return slow(request, env, ctx);
    const key = target.kind === "read" ? target.keys.find((candidate) => recentCopy(candidate) !== undefined) : undefined;
    if (target.kind === "read" && key === undefined) return slow(request, env, ctx);
    const begun = begin(request, env, ctx, plugins);
    if (begun === null) return slow(request, env, ctx);
    return key === undefined ? live(request, begun) : read(request, env, ctx, begun, slow, target.path, key);
  };
}

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target !== undefined) return target;
  const parsed = new URL(url);
  const path = parsed.pathname;
  // Hono decodes such paths; the lane leaves them to it rather than decode them its own way.
  if (path.includes("%")) target = NONE;
  else if (path === "/live") target = parsed.search === "" ? { kind: "live", path } : NONE;
  else if (path.startsWith("/v1/")) target = { kind: "read", path, keys: [cacheKey(parsed, "anonymous"), cacheKey(parsed, "everyone")] };
  else target = NONE;
  targets.set(url, target);
  return target;
}

/** The request begun as the app begins it: its id, logger and container; null when the configuration is one the app refuses (it answers that 500, a bad plugin switch included). */
function begin(request: Request, env: Env, ctx: ExecutionContext, plugins: readonly Plugin[]): Begun | null {
  const begun = beginRequest(request.headers.get("x-request-id"), request.headers.get("cf-connecting-ip"));
  try {
    const services = servicesForRequest(env, request.headers, "GET", { log: begun.log, defer: (work) => ctx.waitUntil(work), plugins });
    return { begun, services };
  } catch {
    return null;
  }
}

interface Begun {
  begun: BegunRequest;
  services: Services;
}

function live(request: Request, { begun, services }: Begun): Response {
  const answered: Answered = {
    method: "GET",
    path: "/live",
    status: 200,
    isDevelopment: services.config.isDevelopment,
    roundTrips: 0,
    limiterCalls: 0,
    lane: "fast",
  };
  return answer(request, services.config, begun, services, answered, { "Content-Type": "application/json" }, LIVE_BODY);
}

async function read(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  { begun, services }: Begun,
  slow: Lane,
  path: string,
  key: string,
): Promise<Response> {
  const { config } = services;
  // As the app's requestRateLimits counts an anonymous request: its address's buckets.
  let limits: LimitDecision | null = null;
  const names = config.rateLimitsEnabled ? planRequestLimits("GET", path, null).ip : [];
  if (names.length > 0) {
    try {
      limits = await enforceLimits(services, subjects.ip(begun.clientIp), names, { userId: null, remember: true });
    } catch (refusal) {
      handOver(request, { ...begun, services, limits: null, refusal, staleKey: null });
      return slow(request, env, ctx);
    }
  }

  // Looked up again: the copy may have been replaced or dropped while the request was counted.
  const copy = recentCopy(key);
  let generation: string | null = null;
  if (copy) {
    try {
      const [rows] = await batchRows<[unknown]>(services.db, [validatorStatement(copy.scope, copy.recordId)]);
      generation = generationFrom(rows);
    } catch {
      // Out of date as far as the lane knows: the app reads again and answers what it finds.
    }
  }
  if (!copy || generation !== copy.generation) {
    if (copy) forgetRecentCopy(key);
    handOver(request, { ...begun, services, limits, staleKey: key });
    return slow(request, env, ctx);
  }
  const served = copyAnswer(copy, request.headers.get("if-none-match"));
  const answered: Answered = {
    method: "GET",
    path,
    status: served.status,
    isDevelopment: config.isDevelopment,
    roundTrips: services.roundTrips.count,
    limiterCalls: limiterCalls(services),
    lane: "fast",
  };
  const own = limits ? { ...served.headers, ...rateLimitHeaders(limits.counters) } : served.headers;
  return answer(request, config, begun, services, answered, own, served.body);
}

/**
 * The lane's response: `own` (the route's headers, none of which the middleware would change),
 * then what the app's middleware adds to every answer, in one list: CORS, the bookmark, the
 * security headers, the request id and timing; and the access log line.
 */
function answer(
  request: Request,
  config: AppConfig,
  begun: BegunRequest,
  services: Services | undefined,
  answered: Answered,
  own: Record<string, string>,
  body: BodyInit | null,
): Response {
  const headers: (readonly [string, string])[] = Object.entries(own);
  headers.push(["Vary", "Origin"]);
  const origin = request.headers.get("origin");
  if (origin !== null && isAllowedOrigin(origin, config.corsOrigins, request.url)) headers.push(...allowedOriginHeaders(origin));
  const bookmark = responseBookmark(services, request.headers.get(BOOKMARK_HEADER) ?? undefined);
  if (bookmark !== null) headers.push([BOOKMARK_HEADER, bookmark]);
  headers.push(...securityHeaderPairs(config.isProduction, "Cache-Control" in own), ["X-Request-ID", begun.requestId]);
  const timing = serverTiming(answered);
  if (timing !== null) headers.push(["Server-Timing", timing]);
  logRequest(begun, answered);
  // A list of pairs is one crossing into the runtime; the pairs are only read.
  return new Response(body, { status: answered.status, headers: headers as [string, string][] });
}
