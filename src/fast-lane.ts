import { LRUCache } from "lru-cache";
import { type AccessClaims, readAccessToken } from "./auth/tokens";
import { type AppConfig, loadConfig } from "./config";
import type { LimitDecision, Services } from "./container";
import { batchRows } from "./db/client";
import type { SessionInfo } from "./env";
import { presentedAccessToken } from "./middleware/authenticate";
import { bootstrapped } from "./middleware/bootstrap";
import { allowedOriginHeaders, isAllowedOrigin, VARY_ORIGIN } from "./middleware/cors";
import { type BegunRequest, type Handover, handOver } from "./middleware/handover";
import { copyAnswer, forgetRecentCopy, type KeyParts, keyFor, keyParts, recentCopy } from "./middleware/read-copies";
import { type Answered, beginRequest, logRequest, NO_D1, REQUEST_ID_HEADER, serverTiming } from "./middleware/request-context";
import { BOOKMARK_HEADER, responseBookmark, servicesForRequest } from "./middleware/request-services";
import { securityHeaderPairs } from "./middleware/security-headers";
import type { Plugin } from "./plugin";
import { enforceLimits, rateLimitHeaders, subjects } from "./rate-limits/client";
import { planRequestLimits } from "./rate-limits/policy";
import { generationFrom, validatorStatement, viewerPowers } from "./services/caching/read-copies";
import { limiterCalls } from "./services/platform/build-services";
import { accessCheckStatement, userFromAccessCheck } from "./services/sign-in/sessions";

/** A Worker's fetch handler: the app, which the fast lane gives a request it does not answer itself. */
export type FetchHandler = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/** Where a URL goes in the lane: `/live`, or a read whose copies are kept under the keys of `parts` (those of an anonymous request worked out). */
type Target = { kind: "live" } | { kind: "read"; path: string; parts: KeyParts; anonymous: string; everyone: string } | { kind: "none" };
const NONE: Target = { kind: "none" };
const LIVE: Target = { kind: "live" };

// What each URL lately asked for is (its path and cache keys), so that a hot read does not parse
// and order its query again; NONE for a URL the lane never serves. Bounded in bytes, as URLs come
// from anyone: a long one is worked out each time rather than kept.
const targets = new LRUCache<string, Target>({
  maxSize: 2 * 1024 * 1024,
  maxEntrySize: 16 * 1024,
  sizeCalculation: (target, url) => 2 * url.length * (target.kind === "read" ? 6 : 1) + 256,
});

const LIVE_BODY = JSON.stringify({ status: "alive" });

/**
 * The fast lane (docs/architecture.md "The fast lane"): `/live`, and the public reads whose copy
 * for the request's viewer class (anonymous, or the account a well-signed token names) this
 * isolate keeps in memory (middleware/read-copies.ts), answered without the framework but with
 * exactly the app's answer, headers and access log line, built from the middleware's own
 * functions and constants. A copy is served after the request was counted in its rate limit as
 * the app counts it, once its validator in the request's D1 session says it is current and the
 * token's check, in the same batch, that the token still counts. Nothing is served before the
 * bootstrap run succeeded. Anything else (credentials that are no bearer token, a token that does
 * not verify, a body, a percent-encoded path, a configuration error) goes to `slow` untouched; a
 * copy found out of date, a revoked token or a request the rate limit refused goes to `slow` with
 * what the lane did so far (middleware/handover.ts), so that nothing is counted or read twice, no
 * token is checked against D1 twice, and an error is the app's.
 *
 * Why: on a cached read, Hono's context, a dozen composed middleware and every header written
 * through `Headers.set` were about a fifth of the request's CPU time (bench/README.md, Issue 24).
 */
export function fastLane(plugins: readonly Plugin[], slow: FetchHandler): FetchHandler {
  return (request, env, ctx) => {
    if (request.method !== "GET" || request.body !== null) return slow(request, env, ctx);
    const headers = request.headers;
    const presented = presentedAccessToken(headers.get("authorization") ?? undefined, headers.get("cookie") ?? undefined);
    // Credentials that are no bearer token: the app reads such a request as anonymous.
    if (presented !== null && presented.token === undefined) return slow(request, env, ctx);
    const target = targetOf(request.url);
    if (target.kind === "none" || !bootstrapped(env.DB)) return slow(request, env, ctx);
    if (target.kind === "live") {
      const begun = begin(request, env, ctx, plugins);
      return begun === null ? slow(request, env, ctx) : live(request, begun);
    }
    if (presented?.token !== undefined) return signedIn(request, env, ctx, plugins, slow, target, presented.token, presented.transport);
    const key = [target.anonymous, target.everyone].find((candidate) => recentCopy(candidate) !== undefined);
    const begun = key === undefined ? null : begin(request, env, ctx, plugins);
    return begun === null || key === undefined ? slow(request, env, ctx) : read(request, env, ctx, begun, slow, target.path, key, null);
  };
}

/**
 * A read with a well-signed token: its copy is the one of the account the token names (or the
 * one for everyone), served once the token's check, in the same batch as the validator, finds it
 * still counts. A token that does not verify is the app's (it reads as anonymous).
 */
async function signedIn(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  plugins: readonly Plugin[],
  slow: FetchHandler,
  target: Extract<Target, { kind: "read" }>,
  token: string,
  transport: SessionInfo["transport"],
): Promise<Response> {
  let secrets: readonly string[];
  try {
    secrets = loadConfig(env).tokenSecrets;
  } catch {
    return slow(request, env, ctx);
  }
  // The request is begun only once a copy is known: a signed-in read the lane does not serve costs it a signature check.
  const claims = await readAccessToken(secrets, token, Date.now() / 1000);
  if (claims === null) return slow(request, env, ctx);
  const own = keyFor(target.parts, `user:${claims.userId}`);
  const key = [own, target.everyone].find((candidate) => recentCopy(candidate) !== undefined);
  const started = key === undefined ? null : begin(request, env, ctx, plugins);
  return started === null || key === undefined
    ? slow(request, env, ctx)
    : read(request, env, ctx, started, slow, target.path, key, { claims, transport });
}

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target !== undefined) return target;
  const parsed = new URL(url);
  const path = parsed.pathname;
  // Hono decodes such paths; the lane leaves them to it rather than decode them its own way.
  if (path.includes("%")) target = NONE;
  else if (path === "/live") target = parsed.search === "" ? LIVE : NONE;
  else if (path.startsWith("/v1/")) {
    const parts = keyParts(parsed);
    target = { kind: "read", path, parts, anonymous: keyFor(parts, "anonymous"), everyone: keyFor(parts, "everyone") };
  } else target = NONE;
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
    d1: NO_D1,
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
  slow: FetchHandler,
  path: string,
  key: string,
  token: { claims: AccessClaims; transport: SessionInfo["transport"] } | null,
): Promise<Response> {
  const claims = token?.claims ?? null;
  const { config } = services;
  // As the app's requestRateLimits counts it: an anonymous read in its address's buckets, a
  // signed-in one in its account's. A route that limits a signed-in read by address as well is
  // counted against two subjects, with refunds between them: the app's to do.
  const userId = claims?.userId ?? null;
  let limits: LimitDecision | null = null;
  const plan = config.rateLimitsEnabled ? planRequestLimits("GET", path, userId) : null;
  if (userId !== null && plan !== null && plan.ip.length > 0) return slow(request, env, ctx);
  const names = plan === null ? [] : userId === null ? plan.ip : plan.user;
  if (names.length > 0) {
    const subject = userId === null ? subjects.ip(begun.clientIp) : subjects.user(userId);
    try {
      limits = await enforceLimits(services, subject, names, { userId, remember: true });
    } catch (refusal) {
      handOver(request, { ...begun, services, limits: null, refusal, staleKey: null });
      return slow(request, env, ctx);
    }
  }

  // Looked up again: the copy may have been replaced or dropped while the request was counted;
  // without one the app reads as it would have (its Workers cache included).
  const copy = recentCopy(key);
  if (!copy) {
    handOver(request, { ...begun, services, limits, staleKey: null });
    return slow(request, env, ctx);
  }
  // The token's check travels with the validator, as in `cachedRead`; a read the same for everyone checks no token.
  const check = claims !== null && copy.scope !== "shared" ? claims : null;
  const validator = validatorStatement(copy.scope, copy.recordId);
  let current: boolean;
  let checked: Handover["checked"];
  try {
    const rows = await batchRows<unknown[]>(services.db, check ? [accessCheckStatement(check), validator] : [validator]);
    if (check && token) {
      const user = userFromAccessCheck(rows[0] ?? [], check);
      checked = { userId: check.userId, user, session: user ? { transport: token.transport, sessionId: check.sessionId } : null };
    }
    // A token found revoked reads as anonymous: not this copy (the app reads it afresh, as anonymous).
    const viewer = checked?.user ?? null;
    current =
      (check === null || viewer?.id === check.userId) &&
      viewerPowers(copy.scope, viewer) === copy.powers &&
      generationFrom(rows.at(-1) ?? []) === copy.generation;
  } catch (error) {
    // The app reads afresh, without this copy, and answers what it finds (its error, if D1 still fails).
    begun.log.warn("read cache check failed", { error });
    handOver(request, { ...begun, services, limits, staleKey: key });
    return slow(request, env, ctx);
  }
  if (!current) {
    forgetRecentCopy(key);
    handOver(request, { ...begun, services, limits, staleKey: key, checked });
    return slow(request, env, ctx);
  }
  const served = copyAnswer(copy, request.headers.get("if-none-match"));
  const answered: Answered = {
    method: "GET",
    path,
    status: served.status,
    isDevelopment: config.isDevelopment,
    d1: { ...services.roundTrips },
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
  services: Services,
  answered: Answered,
  own: Record<string, string>,
  body: BodyInit | null,
): Response {
  // One record, handed to the runtime in one go (cheaper than a list of pairs, and than Headers.set
  // per header); no name occurs twice in a lane answer.
  const headers: Record<string, string> = { ...own };
  const add = (pairs: readonly (readonly [string, string])[]) => {
    for (const [name, value] of pairs) headers[name] = value;
  };
  add([VARY_ORIGIN]);
  const origin = request.headers.get("origin");
  if (origin !== null && isAllowedOrigin(origin, config.corsOrigins, request.url)) add(allowedOriginHeaders(origin));
  const bookmark = responseBookmark(services, request.headers.get(BOOKMARK_HEADER) ?? undefined);
  if (bookmark !== null) headers[BOOKMARK_HEADER] = bookmark;
  add(securityHeaderPairs(config.isProduction, "Cache-Control" in own));
  headers[REQUEST_ID_HEADER] = begun.requestId;
  const timing = serverTiming(answered);
  if (timing !== null) headers["Server-Timing"] = timing;
  logRequest(begun, answered);
  return new Response(body, { status: answered.status, headers });
}
