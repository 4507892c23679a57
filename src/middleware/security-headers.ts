import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";

/** For JSON and every other non-HTML response: nothing may load, frame or submit anything. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Security headers on every response. `Cache-Control: no-store` is the default for anything a
 * handler did not mark cacheable, and always for errors; HSTS only in production (browsers
 * would pin it for localhost otherwise).
 */
export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const headers = writableHeaders(c);
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "no-referrer");
  headers.set("X-Frame-Options", "DENY");
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  if (!headers.has("Content-Security-Policy")) headers.set("Content-Security-Policy", API_CSP);
  if (c.res.status >= 400 || !headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
  // Without a loaded configuration the environment is unknown: send HSTS rather than risk omitting it.
  if ((c.get("services") as Services | undefined)?.config.isProduction ?? true) {
    headers.set("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  }
});
