import type { SQL } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ACCESS_COOKIE, readCookie } from "../auth/cookies";
import { authenticationRequired } from "../auth/permissions";
import { type AccessClaims, readAccessToken } from "../auth/tokens";
import { carryInNextBatch, flushCarried } from "../db/client";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/problem";
import { accessCheckStatement, userForAccessToken, userFromAccessCheck } from "../services/sign-in/sessions";

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

// Requests whose carried token check has not answered yet, with the user id their token names
// (`viewerBeforeRead` runs the check early).
const viewerPending = new WeakMap<Context<AppEnv>, number>();

/**
 * Sends the check of a well-signed token (`claims`) with the request's next D1 batch, ahead of
 * `extra` statements, instead of in a round trip of its own; once that batch has run, `user` and
 * `session` are set if the token still counts, and `then` gets the rows of `extra`. The check fails
 * closed as in `authenticate`: should its batch fail, the request is a 503, never an anonymous pass.
 */
export function carryTokenCheck(
  c: Context<AppEnv>,
  check: { claims: AccessClaims; transport: "bearer" | "cookie" } | null,
  extra: SQL[] = [],
  then: (rows: unknown[][]) => void = () => {},
): void {
  const statements = check ? [accessCheckStatement(check.claims), ...extra] : extra;
  if (statements.length === 0) return;
  const wasAuthFlow = c.get("authFlow");
  if (check) {
    c.set("authFlow", true);
    viewerPending.set(c, check.claims.userId);
  }
  carryInNextBatch(c.get("services").db, statements, (rows) => {
    if (check) {
      c.set("authFlow", wasAuthFlow);
      viewerPending.delete(c);
      const user = userFromAccessCheck(rows[0] ?? [], check.claims);
      if (user) {
        c.set("user", user);
        c.set("session", { transport: check.transport, sessionId: check.claims.sessionId });
      }
    }
    then(check ? rows.slice(1) : rows);
  });
}

/** The user id a request's carried token check (`carryTokenCheck`) names while it has not answered yet; null otherwise. */
export function pendingViewerId(c: Context<AppEnv>): number | null {
  return viewerPending.get(c) ?? null;
}

/**
 * The viewer of a request whose token check was carried, before its handler reads anything: runs
 * the check (and whatever travels with it) now, in a round trip of its own, unless it has answered
 * already. For reads whose statements depend on who asks (`owner=me`).
 */
export async function viewerBeforeRead(c: Context<AppEnv>) {
  if (viewerPending.has(c)) await flushCarried(c.get("services").db);
  return c.get("user");
}

/** The well-signed, unexpired token a request presents, with how it came; null when none. */
export async function presentedClaims(c: Context<AppEnv>): Promise<{ claims: AccessClaims; transport: "bearer" | "cookie" } | null> {
  const presented = presentedAccessToken(c.req.header("authorization"), c.req.header("cookie"));
  if (!presented?.token) return null;
  const services = c.get("services");
  const claims = await readAccessToken(services.config.tokenSecrets, presented.token, services.clock.now() / 1000);
  return claims ? { claims, transport: presented.transport } : null;
}

/**
 * `authenticate("optional")` for a read that can start before the viewer is known: a presented
 * token's check travels in the handler's first D1 batch (one round trip for a signed-in read). Until
 * that batch has run, `c.get("user")` is null: the handler reads the viewer after its first query,
 * or provisionally as the account the token names (`pendingViewerId`), or asks `viewerBeforeRead`.
 * A bad, expired or revoked token leaves the request anonymous, as with `optional`.
 */
export const authenticateCarried = createMiddleware<AppEnv>(async (c, next) => {
  c.set("user", null);
  c.set("session", null);
  carryTokenCheck(c, await presentedClaims(c));
  return next();
});

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
    const claims = token ? await readAccessToken(services.config.tokenSecrets, token, services.clock.now() / 1000) : null;
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
