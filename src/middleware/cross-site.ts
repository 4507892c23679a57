import { createMiddleware } from "hono/factory";
import { hasSessionCookie } from "../auth/cookies";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/problem";
import { isAllowedOrigin } from "./cors";

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
// Routes that can start a browser session without carrying its cookies yet.
const SESSION_STARTS = new Set(["/v1/auth/session/login", "/v1/auth/mfa/challenge"]);

/**
 * The spec's cross-site request rule: a POST, PUT, PATCH or DELETE under `/v1` that carries the
 * session cookies, and every session login (and login challenge, which can set the cookies), is refused with 403 when the browser marks it
 * `Sec-Fetch-Site: cross-site` or sends an `Origin` outside the allow-list. A request with
 * neither header passes (scripts, devices), and requests without the cookies (bearer clients)
 * are not checked. Hono's `csrf()` would also refuse header-less form posts, which the spec allows.
 */
export const crossSiteProtection = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  if (UNSAFE.has(method)) {
    const isSessionLogin = method === "POST" && SESSION_STARTS.has(c.req.path);
    if (isSessionLogin || hasSessionCookie(c.req.header("cookie"))) {
      const origin = c.req.header("origin");
      const crossSite = c.req.header("sec-fetch-site")?.toLowerCase() === "cross-site";
      if (crossSite || (origin !== undefined && !isAllowedOrigin(origin, c.get("services").config.corsOrigins, c.req.url))) {
        throw new ApiError(403, {
          code: "CROSS_SITE_REQUEST_REFUSED",
          detail: "Cross-site requests that use the session cookies are refused; call from an allowed origin or use a bearer token.",
        });
      }
    }
  }
  await next();
});
