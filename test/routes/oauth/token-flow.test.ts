import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../../src/auth/tokens";
import { bearer, me, postJson, type TokenPair } from "../../support/accounts";
import type { FakeProfile } from "../../support/fake-upstream-config";
import { api, apiWithVars, expectProblem, getSetCookie } from "../../support/http";
import { enrolTotp } from "../../support/mfa";
import {
  APP_LOGIN,
  appPkce,
  appResult,
  appSignIn,
  beginSignIn,
  browserSignIn,
  claimLogin,
  claimMfa,
  consent,
  fragmentOf,
  NATIVE_LOGIN,
  profile,
  sessionCookiesOf,
  tokenAuthorize,
} from "../../support/oauth";

// The bearer-token variant for apps (OAUTH_TOKEN_FLOW_ENABLED; decisions.md, Authentication
// details): no cookie at all, the callback's fragment carries a one-time login hand-off that
// POST /v1/oauth/token/claim exchanges for the token pair, with the verifier of the app's own PKCE
// challenge, once, within 2 minutes, and not after a revocation or deactivation; a TOTP account
// gets an MFA hand-off whose challenge answers with bearer tokens; no token in any Location; the
// routes are 404 when the flow is off. What the app's challenge binds (a planted hand-off, a
// missing challenge) is in token-flow-binding.test.ts.

/** Claims a login hand-off with the app's verifier and asserts the token pair. */
async function claimed(handoff: string, verifier: string): Promise<TokenPair> {
  const response = await claimLogin(handoff, verifier);
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(getSetCookie(response)).toEqual([]);
  const body = (await response.json()) as TokenPair;
  expect(body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: "bearer", expires_in: 900 });
  return body;
}

/** An app's sign-in as `who` ending in a login hand-off: the hand-off and the app's verifier. */
async function loginHandoff(provider: "google" | "github", who: FakeProfile): Promise<{ handoff: string; verifier: string }> {
  const { response, verifier } = await appSignIn(provider, who);
  return { handoff: appResult(response, "success", "login_handoff"), verifier };
}

/** An app's whole sign-in as `who`: the bearer tokens. */
async function appTokens(provider: "google" | "github", who: FakeProfile): Promise<TokenPair> {
  const { handoff, verifier } = await loginHandoff(provider, who);
  return claimed(handoff, verifier);
}

async function idOf(tokens: TokenPair): Promise<number> {
  const response = await me(tokens.access_token);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

describe("an app's sign-in", () => {
  it.each(["google", "github"] as const)(
    "with %s: no CSRF cookie, a login hand-off in the fragment, claimed once for bearer tokens",
    async (provider) => {
      const pkce = await appPkce();
      const start = await tokenAuthorize(provider, NATIVE_LOGIN, pkce.challenge);
      expect(start.status, await start.clone().text()).toBe(200);
      expect(getSetCookie(start)).toEqual([]);
      expect(start.headers.get("cache-control")).toBe("no-store");
      const { authorization_url } = (await start.json()) as { authorization_url: string };
      const url = new URL(authorization_url);
      expect(url.searchParams.get("redirect_uri")).toBe(`http://localhost/v1/oauth/${provider}/token/callback`);
      // The provider gets the service's own PKCE challenge, never the app's.
      expect(url.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
      expect(url.searchParams.get("code_challenge")).not.toBe(pkce.challenge);
      expect(authorization_url).not.toContain(pkce.challenge);

      // No cookie comes back with the browser: the sealed state and PKCE are the binding.
      const callback = await consent(authorization_url, profile());
      const response = await api(`${callback.pathname}${callback.search}`, { redirect: "manual" });
      expect(response.status).toBe(302);
      const handoff = appResult(response, "success", "login_handoff");
      expect(response.headers.get("location")).not.toContain(pkce.verifier);

      const tokens = await claimed(handoff, pkce.verifier);
      for (const token of [tokens.access_token, tokens.refresh_token]) expect(response.headers.get("location")).not.toContain(token);
      const meResponse = await me(tokens.access_token);
      expect(meResponse.status).toBe(200);
      expect(await meResponse.json()).toMatchObject({ has_usable_password: false });
      await expectProblem(await claimLogin(handoff, pkce.verifier), 400, "OAUTH_HANDOFF_INVALID");
    },
  );

  it("reaches the same account as the browser flow, and again at the next sign-in", async () => {
    const who = profile();
    const browser = await api("/v1/users/me", { headers: { cookie: sessionCookiesOf(await browserSignIn("google", who))! } });
    const { id } = (await browser.json()) as { id: number };
    expect(await idOf(await appTokens("google", who))).toBe(id);
    expect(await idOf(await appTokens("google", who))).toBe(id);
  });

  it("reports errors in the fragment like the browser flow", async () => {
    const { response } = await appSignIn("github", profile({ deny: true }));
    expect(getSetCookie(response)).toEqual([]);
    expect(response.headers.get("location")).toBe(`${NATIVE_LOGIN}#status=error&error=access_denied`);
  });

  it("cannot be replayed: the second callback ends in invalid_state", async () => {
    const { authorizationUrl } = await beginSignIn("google", "token");
    const callback = await consent(authorizationUrl, profile());
    const path = `${callback.pathname}${callback.search}`;
    expect(fragmentOf(await api(path, { redirect: "manual" })).status).toBe("success");
    expect((await api(path, { redirect: "manual" })).headers.get("location")).toBe(`${NATIVE_LOGIN}#status=error&error=invalid_state`);
  });
});

describe("the login hand-off", () => {
  it("lives 2 minutes", async () => {
    const { handoff, verifier } = await loginHandoff("google", profile());
    const row = await env.DB.prepare("SELECT kind, expires_at - unixepoch() AS ttl FROM oauth_handoffs WHERE fingerprint = ?")
      .bind(fingerprint(handoff))
      .first<{ kind: string; ttl: number }>();
    expect(row!.kind).toBe("login");
    expect(row!.ttl).toBeGreaterThan(110);
    expect(row!.ttl).toBeLessThanOrEqual(120);
    await env.DB.prepare("UPDATE oauth_handoffs SET expires_at = unixepoch() - 1 WHERE fingerprint = ?").bind(fingerprint(handoff)).run();
    await expectProblem(await claimLogin(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("is void after the account signs out everywhere in between", async () => {
    const who = profile();
    const tokens = await appTokens("google", who);
    const { handoff, verifier } = await loginHandoff("google", who);
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(tokens.access_token) })).status).toBe(204);
    await expectProblem(await claimLogin(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("is void once the account is deactivated", async () => {
    const who = profile();
    const id = await idOf(await appTokens("google", who));
    const { handoff, verifier } = await loginHandoff("google", who);
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(id).run();
    await expectProblem(await claimLogin(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("is not an MFA hand-off, and an unknown one is refused", async () => {
    const { handoff, verifier } = await loginHandoff("google", profile());
    await expectProblem(await claimMfa(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");
    await expectProblem(await claimLogin(`${handoff}x`, verifier), 400, "OAUTH_HANDOFF_INVALID");
    // The refused claims did not spend it.
    await claimed(handoff, verifier);
  });
});

describe("an app's sign-in to an account with TOTP", () => {
  it("gets an MFA hand-off; its challenge answers with bearer tokens in the body", async () => {
    // An account that exists only through Google, enrolled while its sign-in is recent (no password).
    const who = profile();
    const first = await appTokens("google", who);
    const id = await idOf(first);
    const { authenticator } = await enrolTotp(first.access_token, undefined);

    const { response, verifier } = await appSignIn("google", who);
    const handoff = appResult(response, "mfa_required", "mfa_handoff");
    // Neither the login claim nor a second MFA claim gets anything from it.
    await expectProblem(await claimLogin(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");
    const claim = await claimMfa(handoff, verifier);
    expect(claim.status, await claim.clone().text()).toBe(200);
    const { mfa_required, mfa_token } = (await claim.json()) as { mfa_required: boolean; mfa_token: string };
    expect(mfa_required).toBe(true);
    expect(response.headers.get("location")).not.toContain(mfa_token);
    await expectProblem(await claimMfa(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");

    const answered = await postJson("/v1/auth/mfa/challenge", { mfa_token, code: authenticator.next() });
    expect(answered.status, await answered.clone().text()).toBe(200);
    expect(getSetCookie(answered)).toEqual([]);
    const tokens = (await answered.json()) as TokenPair;
    expect(tokens).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: "bearer", expires_in: 900 });
    expect(await idOf(tokens)).toBe(id);
    for (const token of [tokens.access_token, tokens.refresh_token]) expect(response.headers.get("location")).not.toContain(token);
  });

  it("an MFA hand-off older than 2 minutes is refused", async () => {
    const who = profile();
    const first = await appTokens("github", who);
    await enrolTotp(first.access_token, undefined);
    const { response, verifier } = await appSignIn("github", who);
    const handoff = appResult(response, "mfa_required", "mfa_handoff");
    await env.DB.prepare("UPDATE oauth_handoffs SET expires_at = unixepoch() - 1 WHERE fingerprint = ?").bind(fingerprint(handoff)).run();
    await expectProblem(await claimMfa(handoff, verifier), 400, "OAUTH_HANDOFF_INVALID");
  });
});

describe("with OAUTH_TOKEN_FLOW_ENABLED=false", () => {
  it.each(["google", "github"] as const)(
    "the %s token routes are 404 OAUTH_TOKEN_FLOW_DISABLED, the session flow still works",
    async (provider) => {
      const off = { OAUTH_TOKEN_FLOW_ENABLED: "false" };
      const { challenge } = await appPkce();
      const query = new URLSearchParams({ redirect_uri: NATIVE_LOGIN, code_challenge: challenge });
      await expectProblem(
        await apiWithVars(off, `/v1/oauth/${provider}/token/authorize?${query.toString()}`),
        404,
        "OAUTH_TOKEN_FLOW_DISABLED",
      );
      // Even with a state the enabled deployment made, and the hand-off it gave.
      const { authorizationUrl } = await beginSignIn(provider, "token");
      const callback = await consent(authorizationUrl, profile());
      await expectProblem(
        await apiWithVars(off, `${callback.pathname}${callback.search}`, { redirect: "manual" }),
        404,
        "OAUTH_TOKEN_FLOW_DISABLED",
      );
      const { handoff, verifier } = await loginHandoff(provider, profile());
      const claim = await apiWithVars(off, "/v1/oauth/token/claim", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ login_handoff: handoff, code_verifier: verifier }),
      });
      await expectProblem(claim, 404, "OAUTH_TOKEN_FLOW_DISABLED");
      expect((await apiWithVars(off, `/v1/oauth/${provider}/session/authorize?redirect_uri=${encodeURIComponent(APP_LOGIN)}`)).status).toBe(
        200,
      );
    },
  );
});
