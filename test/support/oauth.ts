import { expect } from "vitest";
import { encodeProfile, type FakeProfile } from "./fake-upstream-config";
import { api, getSetCookie } from "./http";

export const APP_LOGIN = "http://localhost:8081/login";
export const APP_ACCOUNT = "http://localhost:8081/account";

/** A profile no other test uses. */
export function profile(overrides: Partial<FakeProfile> = {}): FakeProfile {
  const id = crypto.randomUUID().slice(0, 8);
  return { sub: `sub-${id}`, email: `oauth-${id}@example.org`, email_verified: true, name: "Oauth User", ...overrides };
}

/** The CSRF cookie pair (`name=value`) a browser would hold after an authorize call, or null. */
export function csrfCookieOf(response: Response): string | null {
  const all = (response.headers as Headers & { getSetCookie(): string[] }).getSetCookie();
  const cookie = all.find((value) => value.startsWith("__Host-relab-oauth="));
  return cookie ? cookie.split(";")[0]! : null;
}

/**
 * Plays the browser at the provider: opens the authorization URL with the profile as the hint
 * (the fake's way of choosing who signs in) and returns the callback URL the provider redirects to.
 */
export async function consent(authorizationUrl: string, who: FakeProfile): Promise<URL> {
  const url = new URL(authorizationUrl);
  url.searchParams.set(url.host.startsWith("github") ? "login" : "login_hint", encodeProfile(who));
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status, await response.clone().text()).toBe(302);
  return new URL(response.headers.get("location")!);
}

/** The fragment fields of a callback's redirect. */
export function fragmentOf(response: Response): Record<string, string> {
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get("location")!);
  return Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
}

/** Starts a browser sign-in and follows it to the callback; returns the callback's response. */
export async function browserSignIn(provider: "google" | "github", who: FakeProfile, redirect = APP_LOGIN): Promise<Response> {
  const start = await api(`/v1/oauth/${provider}/session/authorize?redirect_uri=${encodeURIComponent(redirect)}`);
  expect(start.status, await start.clone().text()).toBe(200);
  const cookie = csrfCookieOf(start)!;
  const { authorization_url } = (await start.json()) as { authorization_url: string };
  const callback = await consent(authorization_url, who);
  return api(`${callback.pathname}${callback.search}`, { headers: { cookie }, redirect: "manual" });
}

// Linking helpers (test/routes/oauth/linking.test.ts, unlinking.test.ts).

/** The session cookies a response set, as a `cookie` request header, or null when it set none. */
export function sessionCookiesOf(response: Response): string | null {
  const all = (response.headers as Headers & { getSetCookie(): string[] }).getSetCookie();
  const pairs = all.map((value) => value.split(";")[0]!).filter((pair) => /^__Host-relab-(auth|refresh)=./.test(pair));
  return pairs.length > 0 ? pairs.join("; ") : null;
}

/** The step-up body of a link or unlink; undefined sends no body at all. */
export type StepUpBody = { current_password?: string; mfa_code?: string } | undefined;

const withBody = (method: string, headers: Record<string, string>, body: StepUpBody): RequestInit =>
  body === undefined
    ? { method, headers }
    : { method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) };

/** POST /v1/oauth/{provider}/associate/authorize with `auth` (bearer or cookie headers) and the step-up body. */
export function associateAuthorize(
  provider: string,
  auth: Record<string, string>,
  body: StepUpBody,
  redirect = APP_ACCOUNT,
): Promise<Response> {
  return api(`/v1/oauth/${provider}/associate/authorize?redirect_uri=${encodeURIComponent(redirect)}`, withBody("POST", auth, body));
}

/** DELETE /v1/oauth/{provider}/associate with `auth` and the step-up body. */
export function unlinkProvider(provider: string, auth: Record<string, string>, body: StepUpBody): Promise<Response> {
  return api(`/v1/oauth/${provider}/associate`, withBody("DELETE", auth, body));
}

/** The whole link: authorize with the step-up, consent as `who`, and the callback; returns the callback's response. */
export async function linkProvider(provider: string, auth: Record<string, string>, body: StepUpBody, who: FakeProfile): Promise<Response> {
  const start = await associateAuthorize(provider, auth, body);
  expect(start.status, await start.clone().text()).toBe(200);
  const cookie = csrfCookieOf(start)!;
  const { authorization_url } = (await start.json()) as { authorization_url: string };
  const callback = await consent(authorization_url, who);
  return api(`${callback.pathname}${callback.search}`, { headers: { cookie }, redirect: "manual" });
}

/** The tokens a fake provider has revoked so far (shared by every test file: compare with `toContain`). */
export async function revokedTokens(provider: "google" | "github"): Promise<string[]> {
  const response = await fetch(`https://${provider}.oauth.test/__revoked`);
  expect(response.status).toBe(200);
  return (await response.json()) as string[];
}

/** The account's links as GET /v1/oauth/associations lists them. */
export async function associations(
  auth: Record<string, string>,
): Promise<{ provider: string; account_email: string | null; created_at: string }[]> {
  const response = await api("/v1/oauth/associations", { headers: auth });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { provider: string; account_email: string | null; created_at: string }[];
}

// Sign-in helpers (test/routes/oauth/sign-in*.test.ts, token-flow*.test.ts).

/** The native app's sign-in target (the token flow's only kind of target). */
export const NATIVE_LOGIN = "relab://login";
export const NATIVE_ACCOUNT = "relab://account";

/** An app's own PKCE pair (RFC 7636, S256): the verifier it keeps, the challenge it sends to the token flow's authorize. */
export interface AppPkce {
  verifier: string;
  challenge: string;
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** A new PKCE pair, computed here (not with the service's code): 43-character verifier, base64url(SHA-256(verifier)) challenge. */
export async function appPkce(): Promise<AppPkce> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

/** GET /v1/oauth/{provider}/token/authorize with `redirect` and, unless null, `challenge`. */
export function tokenAuthorize(provider: string, redirect: string, challenge: string | null): Promise<Response> {
  const query = new URLSearchParams({ redirect_uri: redirect, ...(challenge === null ? {} : { code_challenge: challenge }) });
  return api(`/v1/oauth/${provider}/token/authorize?${query.toString()}`);
}

/**
 * Starts a session or token authorization: the provider URL, the CSRF cookie pair (null for the
 * token flow) and, for the token flow, the app's PKCE pair (`pkce`, or a new one).
 */
export async function beginSignIn(
  provider: "google" | "github",
  flow: "session" | "token",
  redirect = flow === "token" ? NATIVE_LOGIN : APP_LOGIN,
  pkce?: AppPkce,
): Promise<{ authorizationUrl: string; cookie: string | null; pkce: AppPkce | null }> {
  const app = flow === "token" ? (pkce ?? (await appPkce())) : null;
  const start = app
    ? await tokenAuthorize(provider, redirect, app.challenge)
    : await api(`/v1/oauth/${provider}/${flow}/authorize?redirect_uri=${encodeURIComponent(redirect)}`);
  expect(start.status, await start.clone().text()).toBe(200);
  const cookie = csrfCookieOf(start);
  const { authorization_url } = (await start.json()) as { authorization_url: string };
  return { authorizationUrl: authorization_url, cookie, pkce: app };
}

/** The browser arriving at a callback (`path` may be another callback's than the URL's), without following the API's redirect. */
export function followCallback(callback: URL, cookie: string | null, path = callback.pathname): Promise<Response> {
  return api(`${path}${callback.search}`, { headers: cookie === null ? {} : { cookie }, redirect: "manual" });
}

/**
 * An app's sign-in (token flow) up to its callback's response; no cookie is involved. Returns the
 * response and the verifier of the app's challenge, which the hand-off's claim must present.
 */
export async function appSignIn(
  provider: "google" | "github",
  who: FakeProfile,
  redirect = NATIVE_LOGIN,
  pkce?: AppPkce,
): Promise<{ response: Response; verifier: string }> {
  const started = await beginSignIn(provider, "token", redirect, pkce);
  return { response: await followCallback(await consent(started.authorizationUrl, who), null), verifier: started.pkce!.verifier };
}

/** POST /v1/oauth/token/claim; the verifier is left out when undefined. */
export const claimLogin = (handoff: string, verifier?: string) =>
  api("/v1/oauth/token/claim", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ login_handoff: handoff, ...(verifier === undefined ? {} : { code_verifier: verifier }) }),
  });

/** POST /v1/auth/mfa/oauth/claim; the verifier is left out when undefined. */
export const claimMfa = (handoff: string, verifier?: string) =>
  api("/v1/auth/mfa/oauth/claim", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ mfa_handoff: handoff, ...(verifier === undefined ? {} : { code_verifier: verifier }) }),
  });

/**
 * Asserts a token-flow callback to `target` with `status`: no cookie, not cacheable, the hand-off
 * in the fragment only. Returns the hand-off.
 */
export function appResult(response: Response, status: string, handoffField: string, target = NATIVE_LOGIN): string {
  expect(getSetCookie(response)).toEqual([]);
  expect(response.headers.get("cache-control")).toBe("no-store");
  const location = new URL(response.headers.get("location")!);
  expect(`${location.protocol}//${location.host}${location.pathname}`).toBe(target);
  expect(location.search).toBe("");
  const fragment = fragmentOf(response);
  expect(fragment).toEqual({ status, [handoffField]: expect.stringMatching(/^[\w-]{20,}$/) });
  return fragment[handoffField]!;
}
