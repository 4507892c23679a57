import { createMiddleware } from "hono/factory";
import { ACCESS_COOKIE, readCookie } from "../auth/cookies";
import { authenticationRequired } from "../auth/permissions";
import { readAccessToken } from "../auth/tokens";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/problem";
import { userForAccessToken } from "../services/sessions";

function invalidToken(): ApiError {
  return new ApiError(401, {
    code: "INVALID_TOKEN",
    detail: "The access token is invalid, expired or revoked; refresh it or sign in again.",
    headers: { "WWW-Authenticate": 'Bearer realm="relab", error="invalid_token"' },
  });
}

/**
 * The access token a request presents: `Authorization: Bearer <token>` wins over the access
 * cookie. `token` is undefined when credentials were sent but are not a bearer token.
 */
export function presentedAccessToken(
  authorization: string | undefined,
  cookieHeader: string | undefined,
): { token: string | undefined; transport: "bearer" | "cookie" } | null {
  if (authorization !== undefined) {
    return { token: /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization)?.[1], transport: "bearer" };
  }
  const cookie = readCookie(cookieHeader, ACCESS_COOKIE);
  return cookie ? { token: cookie, transport: "cookie" } : null;
}

/**
 * Resolves the caller from `Authorization: Bearer <token>` (which wins) or the access cookie.
 * `required`: no or bad credentials answer 401. `optional`: they leave the request anonymous
 * (public reads that only vary with the viewer). Checking a token reads D1 once; the check fails
 * closed: a database error is a 503, never an anonymous pass.
 */
export function authenticate(mode: "required" | "optional") {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("user", null);
    c.set("session", null);
    const presented = presentedAccessToken(c.req.header("authorization"), c.req.header("cookie"));
    if (!presented) {
      if (mode === "required") throw authenticationRequired();
      return next();
    }
    const { token, transport } = presented;
    const services = c.get("services");
    const claims = token ? await readAccessToken(services.config.tokenSecret, token, services.clock.now() / 1000) : null;
    if (claims) {
      // Only the token check itself fails closed here; what the route does next has its own rules.
      const wasAuthFlow = c.get("authFlow");
      c.set("authFlow", true);
      const user = await userForAccessToken(services, claims);
      c.set("authFlow", wasAuthFlow);
      if (user) {
        c.set("user", user);
        c.set("session", { transport, sessionId: claims.sessionId });
        return next();
      }
    }
    if (mode === "required") throw invalidToken();
    return next();
  });
}
