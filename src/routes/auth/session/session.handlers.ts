import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  ACCESS_COOKIE,
  CLEAR_SITE_DATA,
  clearedSessionCookies,
  readCookie,
  REFRESH_COOKIE,
  sessionCookies,
} from "../../../auth/cookies";
import { requireUser } from "../../../auth/permissions";
import { readAccessToken } from "../../../auth/tokens";
import type { AppEnv } from "../../../env";
import { audit } from "../../../lib/audit";
import { passwordLogin, refreshSession, refreshTokenInvalid } from "../../../services/login";
import {
  endSessionById,
  endSessionByRefreshToken,
  revokeAllSessions,
  type SessionGrant,
} from "../../../services/sessions";
import { serviceDeps } from "../../deps";
import { readCredentials } from "../credentials";
import type { revokeAllSessions as revokeAllRoute, sessionLogin, sessionLogout, sessionRefresh } from "./session.routes";

function setCookies(c: Context<AppEnv>, values: string[]): void {
  for (const value of values) c.header("Set-Cookie", value, { append: true });
}

function setSession(c: Context<AppEnv>, grant: SessionGrant): void {
  setCookies(c, sessionCookies(grant.accessToken, grant.refreshToken, grant.refreshExpiresIn));
}

/** Drops this browser's session state: both cookies, and everything the origin stored. */
export function clearBrowserSession(c: Context<AppEnv>): void {
  setCookies(c, clearedSessionCookies());
  c.header("Clear-Site-Data", CLEAR_SITE_DATA);
}

export const login: RouteHandler<typeof sessionLogin, AppEnv> = async (c) => {
  const { username, password } = readCredentials(c);
  const outcome = await passwordLogin(serviceDeps(c), username, password, "cookie");
  setSession(c, outcome.grant);
  return c.body(null, 204);
};

export const refresh: RouteHandler<typeof sessionRefresh, AppEnv> = async (c) => {
  const presented = readCookie(c.req.header("cookie"), REFRESH_COOKIE);
  const result = presented ? await refreshSession(serviceDeps(c), presented) : ({ refused: "invalid" } as const);
  if ("refused" in result) {
    // Another tab just won the race with this token and the browser already holds the new
    // cookies: clearing them now would sign it out. Otherwise stale cookies only cause retries.
    throw refreshTokenInvalid(result.refused === "raced" ? undefined : { "Set-Cookie": clearedSessionCookies() });
  }
  setSession(c, result.grant);
  return c.body(null, 204);
};

export const logout: RouteHandler<typeof sessionLogout, AppEnv> = async (c) => {
  const cookies = c.req.header("cookie");
  const refreshToken = readCookie(cookies, REFRESH_COOKIE);
  const accessToken = readCookie(cookies, ACCESS_COOKIE);
  let userId: number | null = null;
  if (refreshToken) userId = await endSessionByRefreshToken(c.get("db"), refreshToken);
  const claims = accessToken ? readAccessToken(c.get("config").tokenSecret, accessToken, Date.now() / 1000) : null;
  if (claims && (await endSessionById(c.get("db"), claims.userId, claims.sessionId))) userId ??= claims.userId;
  if (userId !== null) audit(c.get("log"), "auth.logout", { transport: "cookie", user_id: userId });
  clearBrowserSession(c);
  return c.body(null, 204);
};

export const revokeAll: RouteHandler<typeof revokeAllRoute, AppEnv> = async (c) => {
  const user = requireUser(c);
  await revokeAllSessions(c.get("db"), user.id);
  audit(c.get("log"), "auth.sessions.revoked", { user_id: user.id, reason: "revoke_all" });
  clearBrowserSession(c);
  return c.body(null, 204);
};
