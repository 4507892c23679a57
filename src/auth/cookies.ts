import { ACCESS_TOKEN_TTL_SECONDS } from "./tokens";

/** The access-token cookie. The `__Host-` prefix makes browsers insist on Secure, Path=/ and no Domain. */
export const ACCESS_COOKIE = "__Host-relab-auth";
/** The refresh-token cookie. */
export const REFRESH_COOKIE = "__Host-relab-refresh";

const ATTRIBUTES = "Path=/; Secure; HttpOnly; SameSite=Lax";

/** `Set-Cookie` values that start (or continue) a browser session. */
export function sessionCookies(accessToken: string, refreshToken: string, refreshMaxAge: number): string[] {
  return [
    `${ACCESS_COOKIE}=${accessToken}; Max-Age=${ACCESS_TOKEN_TTL_SECONDS}; ${ATTRIBUTES}`,
    `${REFRESH_COOKIE}=${refreshToken}; Max-Age=${refreshMaxAge}; ${ATTRIBUTES}`,
  ];
}

/** `Set-Cookie` values that delete both session cookies. */
export function clearedSessionCookies(): string[] {
  return [ACCESS_COOKIE, REFRESH_COOKIE].map((name) => `${name}=; Max-Age=0; ${ATTRIBUTES}`);
}

/** Asks the browser to drop everything it holds for the API's origin (sent on session logout and revoke-all). */
export const CLEAR_SITE_DATA = '"cache", "cookies", "storage"';

/** The value of one cookie in a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether a request carries either session cookie (the cross-site check applies to it). */
export function hasSessionCookie(header: string | undefined): boolean {
  return readCookie(header, ACCESS_COOKIE) !== undefined || readCookie(header, REFRESH_COOKIE) !== undefined;
}
