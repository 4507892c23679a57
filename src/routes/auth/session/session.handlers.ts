import { ACCESS_COOKIE, clearedSessionCookies, REFRESH_COOKIE, readCookie } from "../../../auth/cookies";
import { readAccessToken } from "../../../auth/tokens";
import type { AppRouteHandler } from "../../../env";
import { audit } from "../../../lib/audit";
import { requireUser } from "../../../middleware/guards";
import { passwordLogin, refreshSession, refreshTokenInvalid } from "../../../services/sign-in/login";
import { endSessionById, endSessionByRefreshToken, revokeAllSessions } from "../../../services/sign-in/sessions";
import { readCredentials } from "../credentials";
import { clearBrowserSession, setSession } from "../transport";
import type { revokeAllSessions as revokeAllRoute, sessionLogin, sessionLogout, sessionRefresh } from "./session.routes";

export const login: AppRouteHandler<typeof sessionLogin> = async (c) => {
  const { username, password } = readCredentials(c);
  const outcome = await passwordLogin(c.get("services"), username, password, "cookie");
  if (outcome.kind === "challenge") return c.json({ mfa_required: true as const, mfa_token: outcome.mfaToken }, 202);
  setSession(c, outcome.grant);
  return c.body(null, 204);
};

export const refresh: AppRouteHandler<typeof sessionRefresh> = async (c) => {
  const presented = readCookie(c.req.header("cookie"), REFRESH_COOKIE);
  const result = presented ? await refreshSession(c.get("services"), presented) : ({ refused: "invalid" } as const);
  if ("refused" in result) {
    // Another tab just won the race with this token and the browser already holds the new
    // cookies: clearing them now would sign it out. Otherwise stale cookies only cause retries.
    throw refreshTokenInvalid(result.refused === "raced" ? undefined : { "Set-Cookie": clearedSessionCookies() });
  }
  setSession(c, result.grant);
  return c.body(null, 204);
};

export const logout: AppRouteHandler<typeof sessionLogout> = async (c) => {
  const cookies = c.req.header("cookie");
  const refreshToken = readCookie(cookies, REFRESH_COOKIE);
  const accessToken = readCookie(cookies, ACCESS_COOKIE);
  let userId: number | null = null;
  if (refreshToken) userId = await endSessionByRefreshToken(c.get("services"), refreshToken);
  const claims = accessToken
    ? await readAccessToken(c.get("services").config.tokenSecrets, accessToken, c.get("services").clock.now() / 1000)
    : null;
  if (claims && (await endSessionById(c.get("services"), claims.userId, claims.sessionId))) userId ??= claims.userId;
  if (userId !== null) audit(c.get("log"), "auth.logout", { transport: "cookie", user_id: userId });
  clearBrowserSession(c);
  return c.body(null, 204);
};

export const revokeAll: AppRouteHandler<typeof revokeAllRoute> = async (c) => {
  const user = requireUser(c);
  await revokeAllSessions(c.get("services"), user.id);
  audit(c.get("log"), "auth.sessions.revoked", { user_id: user.id, reason: "revoke_all" });
  clearBrowserSession(c);
  return c.body(null, 204);
};
