import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import { ApiError } from "../lib/problem";

const ALLOW_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
const ALLOW_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Request-ID, X-D1-Bookmark";
const EXPOSE_HEADERS =
  "X-Request-ID, ETag, Location, Retry-After, RateLimit, RateLimit-Policy, Content-Disposition, Idempotent-Replayed, X-D1-Bookmark";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

/** Whether `origin` may call the API from a browser: a configured app, site or docs origin, or the API's own. */
export function isAllowedOrigin(origin: string, allowed: ReadonlySet<string>, requestUrl: string): boolean {
  return allowed.has(origin) || origin === new URL(requestUrl).origin;
}

/**
 * CORS with credentials for the configured origins and the API's own origin only. A preflight
 * from any other origin is refused with 403, and actual responses to it carry no CORS headers,
 * so the browser withholds them from the calling page. Not hono/cors: it sends the credentials and
 * exposed-headers lines to every origin, answers a foreign preflight 204, and takes any OPTIONS
 * for a preflight (three tests of test/middleware/cors.test.ts fail with it).
 */
export const cors = createMiddleware<AppEnv>(async (c, next) => {
  const origin = c.req.header("origin");
  const allowed = origin !== undefined && isAllowedOrigin(origin, c.get("services").config.corsOrigins, c.req.url);
  const isPreflight = c.req.method === "OPTIONS" && origin !== undefined && c.req.header("access-control-request-method");

  if (isPreflight) {
    if (!allowed) {
      throw new ApiError(403, {
        code: "CORS_ORIGIN_NOT_ALLOWED",
        detail: "This origin may not call the API.",
        headers: { Vary: "Origin" },
      });
    }
    return c.body(null, 204, {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Credentials": "true",
      "Access-Control-Allow-Methods": ALLOW_METHODS,
      "Access-Control-Allow-Headers": ALLOW_HEADERS,
      "Access-Control-Max-Age": PREFLIGHT_MAX_AGE_SECONDS,
      Vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    });
  }

  await next();
  stampCors(writableHeaders(c), allowed ? origin : null);
});

/** Every actual answer varies with the request's `Origin` (appended to a route's own `Vary`). */
const VARY_ORIGIN = ["Vary", "Origin"] as const;

/** The CORS headers of an actual (not preflight) response; `allowedOrigin` is the request's `Origin` when it may read the answer. */
function stampCors(headers: Headers, allowedOrigin: string | null): void {
  headers.append(...VARY_ORIGIN);
  if (allowedOrigin !== null) for (const [name, value] of allowedOriginHeaders(allowedOrigin)) headers.set(name, value);
}

/** What `stampCors` adds besides `Vary: Origin` for an origin that may read the answer. */
function allowedOriginHeaders(origin: string): [string, string][] {
  return [
    ["Access-Control-Allow-Origin", origin],
    ["Access-Control-Allow-Credentials", "true"],
    ["Access-Control-Expose-Headers", EXPOSE_HEADERS],
  ];
}
