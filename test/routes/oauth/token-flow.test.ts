import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../../src/auth/tokens";
import { bearer, me, postJson, type TokenPair } from "../../support/accounts";
import { api, apiWithVars, expectProblem, getSetCookie } from "../../support/http";
import { enrolTotp } from "../../support/mfa";
import { appSignIn, beginSignIn, browserSignIn, consent, fragmentOf, profile, sessionCookiesOf } from "../../support/oauth";

// The bearer-token variant for apps (OAUTH_TOKEN_FLOW_ENABLED; decisions.md, Authentication
// details): no cookie at all, the callback's fragment carries a one-time login hand-off that
// POST /v1/oauth/token/claim exchanges for the token pair, once, within 2 minutes, and not after a
// revocation or deactivation; a TOTP account gets an MFA hand-off whose challenge answers with
// bearer tokens; no token in any Location; the routes are 404 when the flow is off.

const NATIVE = "relab://login";

const claimLogin = (handoff: string) => postJson("/v1/oauth/token/claim", { login_handoff: handoff });
const claimMfa = (handoff: string) => postJson("/v1/auth/mfa/oauth/claim", { mfa_handoff: handoff });

/** Asserts a token-flow callback with `status`: no cookie, not cacheable, fields in the fragment only. Returns the fragment. */
function appResult(response: Response, status: string, handoffField: string): string {
  expect(getSetCookie(response)).toEqual([]);
  expect(response.headers.get("cache-control")).toBe("no-store");
  const location = new URL(response.headers.get("location")!);
  expect(`${location.protocol}//${location.host}${location.pathname}`).toBe(NATIVE);
  expect(location.search).toBe("");
  const fragment = fragmentOf(response);
  expect(fragment).toEqual({ status, [handoffField]: expect.stringMatching(/^[\w-]{20,}$/) });
  return fragment[handoffField]!;
}

/** Claims a login hand-off and asserts the token pair. */
async function claimed(handoff: string): Promise<TokenPair> {
  const response = await claimLogin(handoff);
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(getSetCookie(response)).toEqual([]);
  const body = (await response.json()) as TokenPair;
  expect(body).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: "bearer", expires_in: 900 });
  return body;
}

async function idOf(tokens: TokenPair): Promise<number> {
  const response = await me(tokens.access_token);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

describe("an app's sign-in", () => {
  it.each(["google", "github"] as const)("with %s: no CSRF cookie, a login hand-off in the fragment, claimed once for bearer tokens", async (provider) => {
    const start = await api(`/v1/oauth/${provider}/token/authorize?redirect_uri=${encodeURIComponent(NATIVE)}`);
    expect(start.status, await start.clone().text()).toBe(200);
    expect(getSetCookie(start)).toEqual([]);
    expect(start.headers.get("cache-control")).toBe("no-store");
    const { authorization_url } = (await start.json()) as { authorization_url: string };
    expect(new URL(authorization_url).searchParams.get("redirect_uri")).toBe(`http://localhost/v1/oauth/${provider}/token/callback`);

    // No cookie comes back with the browser: the sealed state and PKCE are the binding.
    const callback = await consent(authorization_url, profile());
    const response = await api(`${callback.pathname}${callback.search}`, { redirect: "manual" });
    expect(response.status).toBe(302);
    const handoff = appResult(response, "success", "login_handoff");

    const tokens = await claimed(handoff);
    for (const token of [tokens.access_token, tokens.refresh_token]) expect(response.headers.get("location")).not.toContain(token);
    const meResponse = await me(tokens.access_token);
    expect(meResponse.status).toBe(200);
    expect(await meResponse.json()).toMatchObject({ has_usable_password: false });
    await expectProblem(await claimLogin(handoff), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("reaches the same account as the browser flow, and again at the next sign-in", async () => {
    const who = profile();
    const browser = await api("/v1/users/me", { headers: { cookie: sessionCookiesOf(await browserSignIn("google", who))! } });
    const { id } = (await browser.json()) as { id: number };
    expect(await idOf(await claimed(appResult(await appSignIn("google", who), "success", "login_handoff")))).toBe(id);
    expect(await idOf(await claimed(appResult(await appSignIn("google", who), "success", "login_handoff")))).toBe(id);
  });

  it("reports errors in the fragment like the browser flow", async () => {
    const response = await appSignIn("github", profile({ deny: true }));
    expect(getSetCookie(response)).toEqual([]);
    expect(response.headers.get("location")).toBe(`${NATIVE}#status=error&error=access_denied`);
  });

  it("cannot be replayed: the second callback ends in invalid_state", async () => {
    const { authorizationUrl } = await beginSignIn("google", "token", NATIVE);
    const callback = await consent(authorizationUrl, profile());
    const path = `${callback.pathname}${callback.search}`;
    expect(fragmentOf(await api(path, { redirect: "manual" })).status).toBe("success");
    expect((await api(path, { redirect: "manual" })).headers.get("location")).toBe(`${NATIVE}#status=error&error=invalid_state`);
  });
});

describe("the login hand-off", () => {
  it("lives 2 minutes", async () => {
    const handoff = appResult(await appSignIn("google", profile()), "success", "login_handoff");
    const row = await env.DB.prepare("SELECT kind, expires_at - unixepoch() AS ttl FROM oauth_handoffs WHERE fingerprint = ?").bind(fingerprint(handoff)).first<{ kind: string; ttl: number }>();
    expect(row!.kind).toBe("login");
    expect(row!.ttl).toBeGreaterThan(110);
    expect(row!.ttl).toBeLessThanOrEqual(120);
    await env.DB.prepare("UPDATE oauth_handoffs SET expires_at = unixepoch() - 1 WHERE fingerprint = ?").bind(fingerprint(handoff)).run();
    await expectProblem(await claimLogin(handoff), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("is void after the account signs out everywhere in between", async () => {
    const who = profile();
    const tokens = await claimed(appResult(await appSignIn("google", who), "success", "login_handoff"));
    const handoff = appResult(await appSignIn("google", who), "success", "login_handoff");
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(tokens.access_token) })).status).toBe(204);
    await expectProblem(await claimLogin(handoff), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("is void once the account is deactivated", async () => {
    const who = profile();
    const id = await idOf(await claimed(appResult(await appSignIn("google", who), "success", "login_handoff")));
    const handoff = appResult(await appSignIn("google", who), "success", "login_handoff");
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(id).run();
    await expectProblem(await claimLogin(handoff), 400, "OAUTH_HANDOFF_INVALID");
  });

  it("is not an MFA hand-off, and an unknown one is refused", async () => {
    const handoff = appResult(await appSignIn("google", profile()), "success", "login_handoff");
    await expectProblem(await claimMfa(handoff), 400, "OAUTH_HANDOFF_INVALID");
    await expectProblem(await claimLogin(`${handoff}x`), 400, "OAUTH_HANDOFF_INVALID");
    // The refused claims did not spend it.
    await claimed(handoff);
  });
});

describe("an app's sign-in to an account with TOTP", () => {
  it("gets an MFA hand-off; its challenge answers with bearer tokens in the body", async () => {
    // An account that exists only through Google, enrolled while its sign-in is recent (no password).
    const who = profile();
    const first = await claimed(appResult(await appSignIn("google", who), "success", "login_handoff"));
    const id = await idOf(first);
    const { authenticator } = await enrolTotp(first.access_token, undefined);

    const response = await appSignIn("google", who);
    const handoff = appResult(response, "mfa_required", "mfa_handoff");
    // Neither the login claim nor a second MFA claim gets anything from it.
    await expectProblem(await claimLogin(handoff), 400, "OAUTH_HANDOFF_INVALID");
    const claim = await claimMfa(handoff);
    expect(claim.status, await claim.clone().text()).toBe(200);
    const { mfa_required, mfa_token } = (await claim.json()) as { mfa_required: boolean; mfa_token: string };
    expect(mfa_required).toBe(true);
    expect(response.headers.get("location")).not.toContain(mfa_token);
    await expectProblem(await claimMfa(handoff), 400, "OAUTH_HANDOFF_INVALID");

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
    const first = await claimed(appResult(await appSignIn("github", who), "success", "login_handoff"));
    await enrolTotp(first.access_token, undefined);
    const handoff = appResult(await appSignIn("github", who), "mfa_required", "mfa_handoff");
    await env.DB.prepare("UPDATE oauth_handoffs SET expires_at = unixepoch() - 1 WHERE fingerprint = ?").bind(fingerprint(handoff)).run();
    await expectProblem(await claimMfa(handoff), 400, "OAUTH_HANDOFF_INVALID");
  });
});

describe("with OAUTH_TOKEN_FLOW_ENABLED=false", () => {
  it.each(["google", "github"] as const)("the %s token routes are 404 OAUTH_TOKEN_FLOW_DISABLED, the session flow still works", async (provider) => {
    const off = { OAUTH_TOKEN_FLOW_ENABLED: "false" };
    const target = encodeURIComponent(NATIVE);
    await expectProblem(await apiWithVars(off, `/v1/oauth/${provider}/token/authorize?redirect_uri=${target}`), 404, "OAUTH_TOKEN_FLOW_DISABLED");
    // Even with a state the enabled deployment made.
    const { authorizationUrl } = await beginSignIn(provider, "token", NATIVE);
    const callback = await consent(authorizationUrl, profile());
    await expectProblem(await apiWithVars(off, `${callback.pathname}${callback.search}`, { redirect: "manual" }), 404, "OAUTH_TOKEN_FLOW_DISABLED");
    expect((await apiWithVars(off, `/v1/oauth/${provider}/session/authorize?redirect_uri=${target}`)).status).toBe(200);
  });
});
