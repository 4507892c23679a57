import { describe, expect, it } from "vitest";
import { encodeProfile, FAKE_GITHUB, FAKE_GOOGLE, type FakeProfile } from "../support/fake-upstream-config";

// Checks the fake identity providers themselves, and that a fetch made by test code (not only by
// the Worker) reaches them through the outbound service: the sign-in tests rely on that to play
// the user's browser at the authorize step.

const REDIRECT = "https://api.relab.test/auth/oauth/callback";
const UA = { "user-agent": "relab-api-test" };

async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = `verifier-${crypto.randomUUID()}-${crypto.randomUUID()}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const challenge = btoa(String.fromCharCode(...digest))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  return { verifier, challenge };
}

const profile = (extra: Partial<FakeProfile> = {}): FakeProfile => ({
  sub: `sub-${crypto.randomUUID()}`,
  email: "ada@example.test",
  email_verified: true,
  name: "Ada",
  ...extra,
});

/** Plays the browser: follows nothing, returns the redirect target the provider chose. */
async function authorize(
  provider: "google" | "github",
  who: FakeProfile,
  challenge: string,
  extra: Record<string, string> = {},
): Promise<URL> {
  const config = provider === "google" ? FAKE_GOOGLE : FAKE_GITHUB;
  const url = new URL(config.authorizeUrl);
  const params = {
    client_id: config.clientId,
    redirect_uri: REDIRECT,
    scope: provider === "google" ? "openid email profile" : "read:user user:email",
    state: "st-123",
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(provider === "google" ? { response_type: "code", login_hint: encodeProfile(who) } : { login: encodeProfile(who) }),
    ...extra,
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

const form = (url: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(body),
  });

function googleToken(code: string, verifier: string, extra: Record<string, string> = {}) {
  return form(FAKE_GOOGLE.tokenUrl, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: FAKE_GOOGLE.clientId,
    client_secret: FAKE_GOOGLE.clientSecret,
    code_verifier: verifier,
    ...extra,
  });
}

function githubToken(code: string, verifier: string, extra: Record<string, string> = {}) {
  const body = {
    client_id: FAKE_GITHUB.clientId,
    client_secret: FAKE_GITHUB.clientSecret,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    ...extra,
  };
  return form(FAKE_GITHUB.tokenUrl, body, { accept: "application/json" });
}

const revokedAt = async (origin: string) => (await (await fetch(`${origin}/__revoked`)).json()) as string[];

describe("fake Google", () => {
  it("runs authorize, token, userinfo, refresh and revoke, and lists the revocation", async () => {
    const who = profile();
    const { verifier, challenge } = await pkce();
    const back = await authorize("google", who, challenge, { access_type: "offline", prompt: "consent" });
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("st-123");
    const code = back.searchParams.get("code")!;

    const tokenResponse = await googleToken(code, verifier);
    expect(tokenResponse.status).toBe(200);
    const tokens = (await tokenResponse.json()) as Record<string, unknown>;
    expect(tokens).toMatchObject({ expires_in: 3599, token_type: "Bearer", scope: "openid email profile" });
    expect(tokens.access_token).toMatch(/^goog-at-/);
    expect(tokens.refresh_token).toMatch(/^goog-rt-/);
    expect(tokens).not.toHaveProperty("id_token");

    // A code works once.
    const replay = await googleToken(code, verifier);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });

    const auth = { authorization: `Bearer ${tokens.access_token}` };
    const userinfo = await fetch(FAKE_GOOGLE.userinfoUrl, { headers: auth });
    expect(await userinfo.json()).toEqual({ sub: who.sub, email: who.email, email_verified: true, name: "Ada" });

    const refreshed = await form(FAKE_GOOGLE.tokenUrl, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token as string,
      client_id: FAKE_GOOGLE.clientId,
      client_secret: FAKE_GOOGLE.clientSecret,
    });
    const second = ((await refreshed.json()) as { access_token: string }).access_token;
    expect(second).toMatch(/^goog-at-/);

    expect((await form(FAKE_GOOGLE.revokeUrl, { token: tokens.refresh_token as string })).status).toBe(200);
    // Revoking the refresh token took its access tokens with it.
    for (const token of [tokens.access_token, second]) {
      expect((await fetch(FAKE_GOOGLE.userinfoUrl, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    }
    expect(await revokedAt("https://google.oauth.test")).toContain(tokens.refresh_token);
    const again = await form(FAKE_GOOGLE.revokeUrl, { token: tokens.refresh_token as string });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_token" });
  });

  it("gives no refresh token without access_type=offline, and redirects to a native-app scheme", async () => {
    const { verifier, challenge } = await pkce();
    const back = await authorize("google", profile(), challenge, { redirect_uri: "relab://oauth/callback" });
    expect(back.protocol).toBe("relab:");
    const response = await googleToken(back.searchParams.get("code")!, verifier, { redirect_uri: "relab://oauth/callback" });
    expect(response.status).toBe(200);
    expect(await response.json()).not.toHaveProperty("refresh_token");
  });

  it("refuses a wrong verifier, and the code is spent afterwards", async () => {
    const { verifier, challenge } = await pkce();
    const code = (await authorize("google", profile(), challenge)).searchParams.get("code")!;
    const wrong = await googleToken(code, `${verifier}x`);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });
    expect((await googleToken(code, verifier)).status).toBe(400);
  });

  it("refuses a wrong client secret (401) and a different redirect_uri", async () => {
    const { verifier, challenge } = await pkce();
    const code = (await authorize("google", profile(), challenge)).searchParams.get("code")!;
    const badClient = await googleToken(code, verifier, { client_secret: "nope" });
    expect(badClient.status).toBe(401);
    expect(await badClient.json()).toMatchObject({ error: "invalid_client" });
    const badRedirect = await googleToken(code, verifier, { redirect_uri: "https://elsewhere.test/cb" });
    expect(await badRedirect.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("sends a refusing user back with access_denied and the state", async () => {
    const back = await authorize("google", profile({ deny: true }), (await pkce()).challenge);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("st-123");
    expect(back.searchParams.has("code")).toBe(false);
  });

  it("answers 400 (no redirect) without PKCE S256", async () => {
    const url = new URL(FAKE_GOOGLE.authorizeUrl);
    const params = {
      client_id: FAKE_GOOGLE.clientId,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: "abc",
      code_challenge_method: "plain",
      login_hint: encodeProfile(profile()),
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    expect((await fetch(url, { redirect: "manual" })).status).toBe(400);
  });

  it("plays an outage of the token endpoint or of userinfo", async () => {
    const first = await pkce();
    const downCode = (await authorize("google", profile({ down: "token" }), first.challenge)).searchParams.get("code")!;
    expect((await googleToken(downCode, first.verifier)).status).toBe(503);

    const second = await pkce();
    const code = (await authorize("google", profile({ down: "userinfo" }), second.challenge)).searchParams.get("code")!;
    const { access_token } = (await (await googleToken(code, second.verifier)).json()) as { access_token: string };
    expect((await fetch(FAKE_GOOGLE.userinfoUrl, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(503);
  });
});

describe("fake GitHub", () => {
  it("reports token errors GitHub's way, as 200 with an error field", async () => {
    const { verifier, challenge } = await pkce();
    const code = (await authorize("github", profile(), challenge)).searchParams.get("code")!;
    const badClient = await githubToken(code, verifier, { client_secret: "nope" });
    expect(badClient.status).toBe(200);
    expect(await badClient.json()).toMatchObject({ error: "incorrect_client_credentials" });
    const badVerifier = await githubToken(code, `${verifier}x`);
    expect(badVerifier.status).toBe(200);
    expect(await badVerifier.json()).toMatchObject({ error: "bad_verification_code" });
    // The failed PKCE attempt spent the code.
    expect(await (await githubToken(code, verifier)).json()).toMatchObject({ error: "bad_verification_code" });
  });

  it("runs authorize, token, user, emails and grant revocation", async () => {
    const who = profile({ sub: "4242", login: "ada-l", email: null });
    const { verifier, challenge } = await pkce();
    const back = await authorize("github", who, challenge);
    expect(back.searchParams.get("state")).toBe("st-123");
    const code = back.searchParams.get("code")!;
    const tokens = (await (await githubToken(code, verifier)).json()) as Record<string, string>;
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "read:user user:email" });
    expect(tokens.access_token).toMatch(/^gho_/);
    expect(await (await githubToken(code, verifier)).json()).toMatchObject({ error: "bad_verification_code" });

    expect((await fetch(FAKE_GITHUB.userUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(403);
    const user = await fetch(FAKE_GITHUB.userUrl, { headers: { ...UA, authorization: `token ${tokens.access_token}` } });
    expect(await user.json()).toEqual({ id: 4242, login: "ada-l", name: "Ada", email: null });
    const emails = await fetch(FAKE_GITHUB.emailsUrl, { headers: { ...UA, authorization: `Bearer ${tokens.access_token}` } });
    expect(await emails.json()).toEqual([]);

    const revoke = (secret: string) =>
      fetch(FAKE_GITHUB.revokeUrl, {
        method: "DELETE",
        headers: { ...UA, authorization: `Basic ${btoa(`${FAKE_GITHUB.clientId}:${secret}`)}`, "content-type": "application/json" },
        body: JSON.stringify({ access_token: tokens.access_token }),
      });
    expect((await revoke("nope")).status).toBe(401);
    expect((await revoke(FAKE_GITHUB.clientSecret)).status).toBe(204);
    expect((await revoke(FAKE_GITHUB.clientSecret)).status).toBe(404);
    expect(await revokedAt("https://github.oauth.test")).toContain(tokens.access_token);
    expect((await fetch(FAKE_GITHUB.userUrl, { headers: { ...UA, authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it("lists a verified primary email, hashes a non-numeric sub, and passes on a refusal", async () => {
    const { verifier, challenge } = await pkce();
    const code = (await authorize("github", profile(), challenge)).searchParams.get("code")!;
    const { access_token } = (await (await githubToken(code, verifier)).json()) as { access_token: string };
    const headers = { ...UA, authorization: `Bearer ${access_token}` };
    expect(await (await fetch(FAKE_GITHUB.emailsUrl, { headers })).json()).toEqual([
      { email: "ada@example.test", primary: true, verified: true, visibility: null },
    ]);
    expect(await (await fetch(FAKE_GITHUB.userUrl, { headers })).json()).toMatchObject({ id: expect.any(Number), login: "octo" });

    const back = await authorize("github", profile({ deny: true }), challenge);
    expect(back.searchParams.get("error")).toBe("access_denied");
  });

  it("answers 404 elsewhere on the host", async () => {
    expect((await fetch("https://github.oauth.test/nowhere", { headers: UA })).status).toBe(404);
  });
});
