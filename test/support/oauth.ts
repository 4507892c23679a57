import { expect } from "vitest";
import { encodeProfile, type FakeProfile } from "./fake-upstream-config";
import { api } from "./http";

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
