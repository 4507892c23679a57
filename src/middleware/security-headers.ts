import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";

/** For JSON and every other non-HTML response: nothing may load, frame or submit anything. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// secureHeaders sends a dozen headers unless told not to; the service sends the ones
// docs/conventions.md lists ("Security headers and caching") and no others.
const NONE = {
  crossOriginEmbedderPolicy: false,
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  strictTransportSecurity: false,
  xContentTypeOptions: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} as const;

/** The same on every response, whatever the route set. */
const fixedHeaders = secureHeaders({
  ...NONE,
  xContentTypeOptions: true, // nosniff
  referrerPolicy: true, // no-referrer
  xFrameOptions: "DENY",
  crossOriginOpenerPolicy: true, // same-origin
});

/** API_CSP, unless the route set a policy of its own (the docs page, uploads, camera files). */
const defaultCsp = secureHeaders({
  ...NONE,
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
  },
  overwrite: false,
});

/**
 * What Hono's middleware cannot say, written after the handler (so, before the two above): the
 * response's headers made writable (a response passed through from `fetch()` has immutable
 * ones, which secureHeaders would fail to set); `Cache-Control: no-store` for anything a handler
 * did not mark cacheable, and always for errors; HSTS only in production, which is known from
 * the configuration once the request has run (browsers would pin it for localhost otherwise).
 */
const afterHandler = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const headers = writableHeaders(c);
  if (c.res.status >= 400 || !headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
  // Without a loaded configuration the environment is unknown: send HSTS rather than risk omitting it.
  if ((c.get("services") as Services | undefined)?.config.isProduction ?? true) {
    headers.set("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  }
});

/** Security headers on every response (docs/conventions.md, "Security headers and caching"). */
export const securityHeaders = every(fixedHeaders, defaultCsp, afterHandler);
