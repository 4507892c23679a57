import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";

/** For JSON and every other non-HTML response: nothing may load, frame or submit anything. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The same on every response, whatever the route set (docs/conventions.md, "Security headers and caching"). */
const FIXED_HEADERS: readonly (readonly [string, string])[] = [
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"],
  ["X-Frame-Options", "DENY"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
];

/**
 * Security headers on every response (docs/conventions.md, "Security headers and caching"), set
 * after the handler: the response's headers made writable (a response passed through from
 * `fetch()` has immutable ones); `Cache-Control: no-store` for anything a handler did not mark
 * cacheable, and always for errors; HSTS only in production, which is known from the
 * configuration once the request has run (browsers would pin it for localhost otherwise);
 * `API_CSP` unless the route set a policy of its own (the docs page, uploads, camera files); the
 * fixed headers; no `X-Powered-By`.
 *
 * One middleware rather than hono/secure-headers twice (fixed headers, then the CSP without
 * overwriting) composed with `every`: the same headers, without composing three middleware on
 * every request (bench/README.md, Issue 24).
 */
export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  // Without a loaded configuration the environment is unknown: send HSTS rather than risk omitting it.
  stampSecurityHeaders(writableHeaders(c), c.res.status, (c.get("services") as Services | undefined)?.config.isProduction ?? true);
});

/** The headers `securityHeaders` sets, on `headers` of a response with `status`. */
function stampSecurityHeaders(headers: Headers, status: number, isProduction: boolean): void {
  if (status >= 400 || !headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
  if (!headers.has("Content-Security-Policy")) headers.set("Content-Security-Policy", API_CSP);
  for (const [name, value] of alwaysSet(isProduction)) headers.set(name, value);
  headers.delete("X-Powered-By");
}

const HSTS = ["Strict-Transport-Security", "max-age=63072000; includeSubDomains"] as const;
const ALWAYS = { production: [HSTS, ...FIXED_HEADERS], other: FIXED_HEADERS };

/** The headers every response gets whatever its route set: the fixed ones, and HSTS in production. */
function alwaysSet(isProduction: boolean): readonly (readonly [string, string])[] {
  return isProduction ? ALWAYS.production : ALWAYS.other;
}

/**
 * The security headers `stampSecurityHeaders` gives a response below 400, as a list the fast lane
 * (src/fast-lane.ts) adds in one go; `setsCacheControl` and `setsCsp` say whether the response has
 * its `Cache-Control` and its own policy (a landing page's) already.
 */
export function securityHeaderPairs(
  isProduction: boolean,
  setsCacheControl: boolean,
  setsCsp = false,
): readonly (readonly [string, string])[] {
  const pairs = PAIRS[`${isProduction ? "production" : "other"}${setsCacheControl ? "" : "+no-store"}`];
  return setsCsp ? pairs.filter(([name]) => name !== "Content-Security-Policy") : pairs;
}

const CSP = ["Content-Security-Policy", API_CSP] as const;
const NO_STORE = ["Cache-Control", "no-store"] as const;
const PAIRS = {
  production: [CSP, ...ALWAYS.production],
  other: [CSP, ...ALWAYS.other],
  "production+no-store": [NO_STORE, CSP, ...ALWAYS.production],
  "other+no-store": [NO_STORE, CSP, ...ALWAYS.other],
} as const;
