// Fake Google and GitHub identity providers, reached through fakeUpstream (Node side). Only Web
// APIs are used (no `node:` imports) because the main tsconfig type-checks everything under
// test/ with the Workers types; the file still never runs inside workerd. For the same reason the
// config import is type-only: a value import would need a `.ts` path (refused by that tsconfig)
// or none (which Vite's config loader warns about), so fakeUpstream passes the endpoints in.
import type { FAKE_GITHUB, FAKE_GOOGLE, FakeProfile } from "./fake-upstream-config";

/** The constants of the same names in fake-upstream-config.ts. */
export type OAuthEndpoints = { google: typeof FAKE_GOOGLE; github: typeof FAKE_GITHUB };

/** What the fake reads of a request; miniflare's Request has all of it. */
export interface OAuthRequest {
  method: string;
  url: string;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** A plain answer that fakeUpstream turns into a miniflare Response (so this file needs no miniflare). */
export interface OAuthReply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

type Grant = {
  profile: FakeProfile;
  challenge: string;
  redirectUri: string;
  clientId: string;
  scope: string;
  offline: boolean;
  used: boolean;
};
type Token = { profile: FakeProfile; scope: string; revoked: boolean; refresh?: string };

/** One provider's memory. It lives in the Node process, so it is shared by every test file. */
class ProviderState {
  codes = new Map<string, Grant>();
  access = new Map<string, Token>();
  refresh = new Map<string, Token>();
  /** Tokens revoked through the revoke endpoint, in order, for tests to inspect via `/__revoked`. */
  revoked: string[] = [];
}
const google = new ProviderState();
const github = new ProviderState();

const json = (status: number, value: unknown, headers: Record<string, string> = {}): OAuthReply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(value),
});
const text = (status: number, body: string): OAuthReply => ({ status, headers: { "content-type": "text/plain" }, body });
const empty = (status: number): OAuthReply => ({ status, headers: {}, body: null });

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** Unguessable, so that a test cannot pass by predicting a code or token. */
function random(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function s256(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

/** URL.canParse is missing from the typings in use. */
function parses(url: string): boolean {
  try {
    return Boolean(new URL(url));
  } catch {
    return false;
  }
}

function decodeProfile(hint: string | null): FakeProfile | null {
  if (!hint) return null;
  try {
    const binary = atob(hint.replace(/-/g, "+").replace(/_/g, "/"));
    const profile = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
    return typeof profile?.sub === "string" ? (profile as FakeProfile) : null;
  } catch {
    return null;
  }
}

/**
 * The consent screen, skipped: the hint names the user, who agrees at once (or refuses, for
 * `deny`). Bad requests get a 400 page rather than a redirect, as the real providers do when
 * they cannot trust the redirect target. PKCE with S256 is demanded so a client without it fails.
 */
function authorize(state: ProviderState, url: URL, clientId: string, hintParam: string, requireCodeType: boolean) {
  const q = url.searchParams;
  const redirectUri = q.get("redirect_uri");
  if (q.get("client_id") !== clientId) return text(400, "unknown client_id");
  if (!redirectUri || !parses(redirectUri)) return text(400, "missing or invalid redirect_uri");
  if (requireCodeType && q.get("response_type") !== "code") return text(400, "response_type must be code");
  if (!q.get("code_challenge") || q.get("code_challenge_method") !== "S256") return text(400, "PKCE S256 required");
  const profile = decodeProfile(q.get(hintParam));
  if (!profile) return text(400, `${hintParam} must be encodeProfile(...) in tests`);

  const target = new URL(redirectUri);
  if (profile.deny) {
    target.searchParams.set("error", "access_denied");
  } else {
    const code = random("code-");
    state.codes.set(code, {
      profile,
      challenge: q.get("code_challenge")!,
      redirectUri,
      clientId,
      scope: q.get("scope") ?? "",
      offline: q.get("access_type") === "offline",
      used: false,
    });
    target.searchParams.set("code", code);
  }
  const stateParam = q.get("state");
  if (stateParam !== null) target.searchParams.set("state", stateParam);
  return { status: 302, headers: { location: target.toString() }, body: null };
}

/**
 * Checks shared by both token endpoints. A code is spent by its first exchange attempt, even one
 * that then fails its redirect or PKCE check, so a stolen code cannot be retried with guesses;
 * an outage (`down`) does not spend it, since the provider never looked at it.
 */
async function redeem(state: ProviderState, form: URLSearchParams): Promise<{ grant: Grant } | { fault: "grant" | "redirect" | "down" }> {
  const grant = state.codes.get(form.get("code") ?? "");
  if (!grant || grant.used || grant.clientId !== form.get("client_id")) return { fault: "grant" };
  if (grant.profile.down === "token") return { fault: "down" };
  grant.used = true;
  if (form.get("redirect_uri") !== grant.redirectUri) return { fault: "redirect" };
  if ((await s256(form.get("code_verifier") ?? "")) !== grant.challenge) return { fault: "grant" };
  return { grant };
}

/** `Bearer x`, or GitHub's older `token x`; a revoked token counts as unknown. */
function bearer(state: ProviderState, request: OAuthRequest, allowTokenScheme: boolean): Token | null {
  const match = /^(Bearer|token) (\S+)$/i.exec(request.headers.get("authorization") ?? "");
  if (!match || (match[1]!.toLowerCase() === "token" && !allowTokenScheme)) return null;
  const token = state.access.get(match[2]!);
  return token && !token.revoked ? token : null;
}

function basicCredentials(request: OAuthRequest): [string, string] | null {
  const match = /^Basic (\S+)$/i.exec(request.headers.get("authorization") ?? "");
  if (!match) return null;
  try {
    const decoded = atob(match[1]!);
    const colon = decoded.indexOf(":");
    return colon < 0 ? null : [decoded.slice(0, colon), decoded.slice(colon + 1)];
  } catch {
    return null;
  }
}

/** Test hooks on both hosts: inspect revocations, or forget everything. */
function housekeeping(state: ProviderState, request: OAuthRequest, path: string): OAuthReply | null {
  if (path === "/__revoked" && request.method === "GET") return json(200, state.revoked);
  if (path !== "/__reset" || request.method !== "POST") return null;
  // Clears state other test files may be using at the same moment; meant for a lone debugging run.
  for (const map of [state.codes, state.access, state.refresh]) map.clear();
  state.revoked.length = 0;
  return empty(204);
}

async function googleProvider(request: OAuthRequest, url: URL, endpoints: OAuthEndpoints["google"]): Promise<OAuthReply> {
  const path = url.pathname;
  const at = (endpoint: string, method: string) => path === new URL(endpoint).pathname && request.method === method;
  if (at(endpoints.authorizeUrl, "GET")) return authorize(google, url, endpoints.clientId, "login_hint", true);

  if (at(endpoints.tokenUrl, "POST")) {
    const form = new URLSearchParams(await request.text());
    // Google takes client credentials in the body or as HTTP Basic; both are accepted here.
    const [id, secret] = basicCredentials(request) ?? [form.get("client_id"), form.get("client_secret")];
    if (id !== endpoints.clientId || secret !== endpoints.clientSecret) {
      return json(401, { error: "invalid_client", error_description: "The OAuth client was not found." });
    }
    form.set("client_id", id); // redeem() compares the code's client with the form's, even for Basic.
    const issue = (token: Token, refresh?: string) => {
      const accessToken = random("goog-at-");
      google.access.set(accessToken, { ...token, refresh });
      return { access_token: accessToken, expires_in: 3599, token_type: "Bearer", scope: token.scope };
    };
    const grantType = form.get("grant_type");
    if (grantType === "authorization_code") {
      const result = await redeem(google, form);
      if ("fault" in result) {
        if (result.fault === "down") return text(503, "token endpoint unavailable");
        return json(400, { error: "invalid_grant", error_description: "Bad Request" });
      }
      const { profile, scope, offline } = result.grant;
      if (!offline) return json(200, issue({ profile, scope, revoked: false }));
      // A refresh token only for access_type=offline, as Google does.
      const refreshToken = random("goog-rt-");
      google.refresh.set(refreshToken, { profile, scope, revoked: false });
      return json(200, { ...issue({ profile, scope, revoked: false }, refreshToken), refresh_token: refreshToken });
    }
    if (grantType === "refresh_token") {
      const refreshToken = form.get("refresh_token") ?? "";
      const grant = google.refresh.get(refreshToken);
      if (!grant || grant.revoked) return json(400, { error: "invalid_grant", error_description: "Token has been expired or revoked." });
      if (grant.profile.down === "token") return text(503, "token endpoint unavailable");
      return json(200, issue({ profile: grant.profile, scope: grant.scope, revoked: false }, refreshToken));
    }
    return json(400, { error: "unsupported_grant_type" });
  }

  if (at(endpoints.userinfoUrl, "GET")) {
    const token = bearer(google, request, false);
    if (!token) return json(401, { error: "invalid_request", error_description: "Invalid Credentials" });
    if (token.profile.down === "userinfo") return text(503, "userinfo unavailable");
    const { sub, email, email_verified, name } = token.profile;
    return json(200, { sub, email, email_verified, name });
  }

  if (at(endpoints.revokeUrl, "POST")) {
    const token = new URLSearchParams(await request.text()).get("token") ?? url.searchParams.get("token") ?? "";
    const access = google.access.get(token);
    const refresh = google.refresh.get(token);
    const target = access ?? refresh;
    if (!target || target.revoked) return json(400, { error: "invalid_token", error_description: "Token expired or revoked" });
    target.revoked = true;
    // The access tokens minted from a refresh token die with it.
    if (refresh) for (const t of google.access.values()) if (t.refresh === token) t.revoked = true;
    google.revoked.push(token);
    return json(200, {});
  }
  return housekeeping(google, request, path) ?? text(404, "Not Found");
}

/** GitHub user ids are numbers: a numeric `sub` is used as is, anything else is hashed (FNV-1a). */
function githubId(sub: string): number {
  if (/^\d{1,15}$/.test(sub)) return Number(sub);
  let hash = 0x811c9dc5;
  for (const char of sub) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return hash;
}

async function githubProvider(request: OAuthRequest, url: URL, endpoints: OAuthEndpoints["github"]): Promise<OAuthReply> {
  const path = url.pathname;
  const at = (endpoint: string, method: string) => path === new URL(endpoint).pathname && request.method === method;
  if (at(endpoints.authorizeUrl, "GET")) return authorize(github, url, endpoints.clientId, "login", false);

  if (at(endpoints.tokenUrl, "POST")) {
    const form = new URLSearchParams(await request.text());
    // GitHub reports token errors with HTTP 200 and an `error` field, and answers form-encoded
    // unless asked for JSON: a client that checks only the status, or forgets the Accept header, fails here.
    const reply = (body: Record<string, string>) =>
      request.headers.get("accept")?.includes("application/json")
        ? json(200, body)
        : { status: 200, headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(body).toString() };
    if (form.get("client_id") !== endpoints.clientId || form.get("client_secret") !== endpoints.clientSecret) {
      return reply({
        error: "incorrect_client_credentials",
        error_description: "The client_id and/or client_secret passed are incorrect.",
      });
    }
    const result = await redeem(github, form);
    if ("fault" in result) {
      if (result.fault === "down") return text(503, "token endpoint unavailable");
      if (result.fault === "redirect") {
        return reply({
          error: "redirect_uri_mismatch",
          error_description: "The redirect_uri MUST match the registered callback URL for this application.",
        });
      }
      return reply({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
    }
    const accessToken = random("gho_");
    const { profile, scope } = result.grant;
    github.access.set(accessToken, { profile, scope, revoked: false });
    return reply({ access_token: accessToken, token_type: "bearer", scope });
  }

  // The REST API (api.github.com in real life) refuses requests without a User-Agent.
  const apiPaths = [endpoints.userUrl, endpoints.emailsUrl, endpoints.revokeUrl].map((u) => new URL(u).pathname);
  if (apiPaths.includes(path) && !request.headers.get("user-agent")) {
    return json(403, { message: "Request forbidden by administrative rules. Please make sure your request has a User-Agent header." });
  }

  if (at(endpoints.userUrl, "GET") || at(endpoints.emailsUrl, "GET")) {
    const token = bearer(github, request, true);
    if (!token) return json(401, { message: "Bad credentials", status: "401" });
    const { profile } = token;
    if (profile.down === "userinfo") return text(503, "api unavailable");
    if (path === new URL(endpoints.emailsUrl).pathname) {
      return json(
        200,
        profile.email === null ? [] : [{ email: profile.email, primary: true, verified: profile.email_verified, visibility: null }],
      );
    }
    return json(200, { id: githubId(profile.sub), login: profile.login ?? "octo", name: profile.name ?? null, email: profile.email });
  }

  if (at(endpoints.revokeUrl, "DELETE")) {
    const credentials = basicCredentials(request);
    if (credentials?.[0] !== endpoints.clientId || credentials[1] !== endpoints.clientSecret) {
      return json(401, { message: "Bad credentials", status: "401" });
    }
    let accessToken = "";
    try {
      accessToken = String((JSON.parse(await request.text()) as { access_token?: unknown }).access_token ?? "");
    } catch {
      return json(400, { message: "Problems parsing JSON", status: "400" });
    }
    const token = github.access.get(accessToken);
    if (!token || token.revoked) return json(404, { message: "Not Found", status: "404" });
    token.revoked = true;
    github.revoked.push(accessToken);
    return empty(204);
  }
  return housekeeping(github, request, path) ?? json(404, { message: "Not Found", status: "404" });
}

/**
 * What the fake video platform (same Node process) learns of a Google access token, as Google's
 * own APIs would: whose it is, what it was granted, whether it was revoked. Null if never issued.
 */
export function googleAccessTokenInfo(token: string): { sub: string; scope: string; revoked: boolean } | null {
  const found = google.access.get(token);
  return found ? { sub: found.profile.sub, scope: found.scope, revoked: found.revoked } : null;
}

/** The fake's answer when the request is for one of its two hosts, otherwise null. */
export async function fakeOAuthProvider(request: OAuthRequest, endpoints: OAuthEndpoints): Promise<OAuthReply | null> {
  const url = new URL(request.url);
  if (url.host === new URL(endpoints.google.authorizeUrl).host) return googleProvider(request, url, endpoints.google);
  if (url.host === new URL(endpoints.github.authorizeUrl).host) return githubProvider(request, url, endpoints.github);
  return null;
}
