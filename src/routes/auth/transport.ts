import type { Context } from "hono";
import { CLEAR_SITE_DATA, clearedSessionCookies, sessionCookies } from "../../auth/cookies";
import { ACCESS_TOKEN_TTL_SECONDS } from "../../auth/tokens";
import type { AppEnv } from "../../env";
import type { SessionGrant } from "../../services/sign-in/sessions";

// How a session reaches each transport: a token pair in the body for bearer clients, cookies for
// browsers. Every route that hands out or ends a session goes through these.

/** The bearer transport's body for a new session. */
export function tokenPair(grant: SessionGrant) {
  return {
    access_token: grant.accessToken,
    refresh_token: grant.refreshToken,
    token_type: "bearer" as const,
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
  };
}

function setCookies(c: Context<AppEnv>, values: string[]): void {
  for (const value of values) c.header("Set-Cookie", value, { append: true });
}

/** Sets a browser's session cookies for a new session. */
export function setSession(c: Context<AppEnv>, grant: SessionGrant): void {
  setCookies(c, sessionCookies(grant.accessToken, grant.refreshToken, grant.refreshExpiresIn));
}

/** Drops this browser's session state: both cookies, and everything the origin stored. */
export function clearBrowserSession(c: Context<AppEnv>): void {
  setCookies(c, clearedSessionCookies());
  c.header("Clear-Site-Data", CLEAR_SITE_DATA);
}
