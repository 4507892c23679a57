import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openFieldText, parseDataKey, singleKeyRing } from "../../../src/lib/data-encryption";
import { ageSessions, bearer, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { enrolTotp } from "../../support/mfa";
import {
  APP_ACCOUNT,
  associations,
  browserSignIn,
  fragmentOf,
  linkProvider,
  profile,
  revokedTokens,
  sessionCookiesOf,
  unlinkProvider,
} from "../../support/oauth";

// Unlinking a provider (step-up, the last way to sign in, the grant revoked at the provider, but
// kept while the other link of the same Google account needs it) and the revocation that account
// deletion asks of the provider. The fakes' revocation lists are
// shared by every test file, so each test finds its own token in them rather than counting.

const SUCCESS = `${APP_ACCOUNT}#status=success`;

/** The plaintext of a link's sealed token, as the service would open it for revocation. */
async function linkToken(userId: number, provider: string, which: "access" | "refresh"): Promise<string> {
  const row = await env.DB.prepare(
    `SELECT account_id, ${which}_token_sealed AS sealed FROM oauth_accounts WHERE user_id = ? AND provider = ?`,
  )
    .bind(userId, provider)
    .first<{ account_id: string; sealed: string | null }>();
  expect(row?.sealed, `${provider} ${which} token of user ${userId}`).toBeTruthy();
  return openFieldText(singleKeyRing(parseDataKey(env.DATA_ENCRYPTION_KEY)), row!.sealed!, `oauth:${provider}:${row!.account_id}`);
}

async function linkedProviders(userId: number): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT provider FROM oauth_accounts WHERE user_id = ? ORDER BY provider")
    .bind(userId)
    .all<{ provider: string }>();
  return rows.results.map((row) => row.provider);
}

async function link(
  provider: string,
  auth: Record<string, string>,
  body: { current_password?: string; mfa_code?: string },
  who = profile(),
) {
  const callback = await linkProvider(provider, auth, body, who);
  expect(callback.status).toBe(302);
  expect(callback.headers.get("location")).toBe(SUCCESS);
  return who;
}

/** An account created by a Google sign-in (no password, no TOTP), signed in just now with session cookies. */
async function googleOnlyAccount() {
  const signedIn = await browserSignIn("google", profile());
  expect(fragmentOf(signedIn)).toEqual({ status: "success" });
  const auth = { cookie: sessionCookiesOf(signedIn)! };
  const me = await api("/v1/users/me", { headers: auth });
  expect(me.status).toBe(200);
  return { auth, id: ((await me.json()) as { id: number }).id };
}

describe("DELETE /v1/oauth/{provider}/associate", () => {
  it("unlinks GitHub after the step-up and has GitHub revoke the grant", async () => {
    const user = await verifiedUser("unlinkgh");
    const auth = bearer(user.tokens.access_token);
    await link("github", auth, { current_password: user.password });
    const token = await linkToken(user.id, "github", "access");
    expect(token).toMatch(/^gho_/);
    const before = await revokedTokens("github");
    expect(before).not.toContain(token);

    const response = await unlinkProvider("github", auth, { current_password: user.password });
    expect(response.status, await response.clone().text()).toBe(204);
    expect(await associations(auth)).toEqual([]);
    expect(await linkedProviders(user.id)).toEqual([]);
    const after = await revokedTokens("github");
    expect(after).toContain(token);
    expect(after.length).toBeGreaterThan(before.length);
  });

  it("needs a signed-in caller", async () => {
    await expectProblem(await unlinkProvider("github", {}, {}), 401, "AUTHENTICATION_REQUIRED");
  });

  it("a missing or wrong password unlinks nothing and revokes nothing", async () => {
    const user = await verifiedUser("unlinkwrong");
    const auth = bearer(user.tokens.access_token);
    await link("github", auth, { current_password: user.password });
    const token = await linkToken(user.id, "github", "access");

    await expectProblem(await unlinkProvider("github", auth, {}), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(await unlinkProvider("github", auth, { current_password: `${user.password}x` }), 403, "CURRENT_PASSWORD_INVALID");
    expect(await linkedProviders(user.id)).toEqual(["github"]);
    expect(await revokedTokens("github")).not.toContain(token);
  });

  it("a TOTP account needs the code as well", async () => {
    const user = await verifiedUser("unlinktotp");
    const { authenticator, tokens } = await enrolTotp(user.tokens.access_token, user.password);
    const auth = bearer(tokens.access_token);
    await link("github", auth, { current_password: user.password, mfa_code: authenticator.next() });
    await expectProblem(await unlinkProvider("github", auth, { current_password: user.password }), 400, "MFA_CODE_REQUIRED");
    await expectProblem(
      await unlinkProvider("github", auth, { current_password: user.password, mfa_code: authenticator.stale() }),
      403,
      "MFA_CODE_INVALID",
    );
    expect(await linkedProviders(user.id)).toEqual(["github"]);
    expect((await unlinkProvider("github", auth, { current_password: user.password, mfa_code: authenticator.next() })).status).toBe(204);
    expect(await linkedProviders(user.id)).toEqual([]);
  });

  it("a provider that is not linked: 404 OAUTH_NOT_LINKED", async () => {
    const user = await verifiedUser("unlinknone");
    const auth = bearer(user.tokens.access_token);
    await expectProblem(await unlinkProvider("github", auth, { current_password: user.password }), 404, "OAUTH_NOT_LINKED");
    await expectProblem(await unlinkProvider("google-youtube", auth, { current_password: user.password }), 404, "OAUTH_NOT_LINKED");
  });

  it("an account without a password cannot unlink its only sign-in; with GitHub linked as well it can", async () => {
    const account = await googleOnlyAccount();
    const only = await unlinkProvider("google", account.auth, {});
    const problem = await expectProblem(only, 409, "LAST_SIGN_IN_METHOD");
    expect(problem.detail).toMatch(/password|another provider/);
    expect(await linkedProviders(account.id)).toEqual(["google"]);

    // The step-up of an account with neither password nor TOTP is the recent sign-in: an empty body.
    await link("github", account.auth, {});
    const googleToken = await linkToken(account.id, "google", "access");
    expect(googleToken).toMatch(/^goog-at-/);
    expect((await unlinkProvider("google", account.auth, {})).status).toBe(204);
    expect(await linkedProviders(account.id)).toEqual(["github"]);
    expect(await revokedTokens("google")).toContain(googleToken);
    // Now GitHub is the last way in.
    await expectProblem(await unlinkProvider("github", account.auth, {}), 409, "LAST_SIGN_IN_METHOD");
    expect(await linkedProviders(account.id)).toEqual(["github"]);
  });

  it("the recent sign-in of an account without a password expires after 10 minutes", async () => {
    const account = await googleOnlyAccount();
    await link("github", account.auth, {});
    await ageSessions(account.id, 660);
    await expectProblem(await unlinkProvider("github", account.auth, {}), 403, "RECENT_SIGN_IN_REQUIRED");
    expect(await linkedProviders(account.id)).toEqual(["github", "google"]);
  });

  it("the video association never counts as a way to sign in, and can always be unlinked", async () => {
    const account = await googleOnlyAccount();
    await link("google-youtube", account.auth, {});
    expect(await linkedProviders(account.id)).toEqual(["google", "google-youtube"]);
    await expectProblem(await unlinkProvider("google", account.auth, {}), 409, "LAST_SIGN_IN_METHOD");

    const refresh = await linkToken(account.id, "google-youtube", "refresh");
    expect(refresh).toMatch(/^goog-rt-/);
    expect((await unlinkProvider("google-youtube", account.auth, {})).status).toBe(204);
    expect(await linkedProviders(account.id)).toEqual(["google"]);
    // The refresh token ends the whole offline grant.
    expect(await revokedTokens("google")).toContain(refresh);
  });
});

describe("Google sign-in and the video link of one Google account", () => {
  // They share one Google client, and Google revokes every scope given to it at once: the grant is
  // kept while the other link still uses it, and revoked with the last of them.

  /** The token the service revokes a link's grant with: the refresh token, else the access token. */
  async function grantToken(userId: number, provider: string): Promise<string> {
    const row = await env.DB.prepare("SELECT refresh_token_sealed FROM oauth_accounts WHERE user_id = ? AND provider = ?")
      .bind(userId, provider)
      .first<{ refresh_token_sealed: string | null }>();
    return linkToken(userId, provider, row?.refresh_token_sealed ? "refresh" : "access");
  }

  /** A password account with Google sign-in and the video link, both of the same Google account. */
  async function linkedTwice() {
    const user = await verifiedUser("unlinkpair");
    const auth = bearer(user.tokens.access_token);
    const who = profile();
    await link("google", auth, { current_password: user.password }, who);
    await link("google-youtube", auth, { current_password: user.password }, who);
    expect(await linkedProviders(user.id)).toEqual(["google", "google-youtube"]);
    return { user, auth, google: await grantToken(user.id, "google"), video: await grantToken(user.id, "google-youtube") };
  }

  it.each([
    ["google", "google-youtube"],
    ["google-youtube", "google"],
  ] as const)("unlinking %s keeps the grant while %s remains; unlinking that one too revokes it", async (firstGone, lastGone) => {
    const { user, auth, ...tokens } = await linkedTwice();
    const token = (provider: string) => (provider === "google" ? tokens.google : tokens.video);
    expect(token("google")).not.toBe(token("google-youtube"));

    expect((await unlinkProvider(firstGone, auth, { current_password: user.password })).status).toBe(204);
    expect(await linkedProviders(user.id)).toEqual([lastGone]);
    const kept = await revokedTokens("google");
    expect(kept).not.toContain(token(firstGone));
    expect(kept).not.toContain(token(lastGone));

    expect((await unlinkProvider(lastGone, auth, { current_password: user.password })).status).toBe(204);
    expect(await linkedProviders(user.id)).toEqual([]);
    expect(await revokedTokens("google")).toContain(token(lastGone));
  });

  it("links of two different Google accounts are revoked each on its own", async () => {
    const user = await verifiedUser("unlinkapart");
    const auth = bearer(user.tokens.access_token);
    await link("google", auth, { current_password: user.password });
    await link("google-youtube", auth, { current_password: user.password });
    const google = await grantToken(user.id, "google");
    expect((await unlinkProvider("google", auth, { current_password: user.password })).status).toBe(204);
    expect(await revokedTokens("google")).toContain(google);
    expect(await linkedProviders(user.id)).toEqual(["google-youtube"]);
  });

  it("account deletion revokes the grant of both", async () => {
    const { user, auth, google, video } = await linkedTwice();
    const response = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ current_password: user.password }),
    });
    expect(response.status, await response.clone().text()).toBe(204);
    const revoked = await revokedTokens("google");
    expect(revoked, "video grant revoked on account deletion").toContain(video);
    expect(revoked, "sign-in grant revoked on account deletion").toContain(google);
  });
});

describe("account deletion and linked sign-ins", () => {
  it("asks each provider to revoke the grant and removes the links", async () => {
    const user = await verifiedUser("deletelinked");
    const auth = bearer(user.tokens.access_token);
    await link("google", auth, { current_password: user.password });
    await link("github", auth, { current_password: user.password });
    const googleToken = await linkToken(user.id, "google", "access");
    const githubToken = await linkToken(user.id, "github", "access");
    expect(googleToken).toMatch(/^goog-/);

    const response = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ current_password: user.password }),
    });
    expect(response.status, await response.clone().text()).toBe(204);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM oauth_accounts WHERE user_id = ?").bind(user.id).first<{ n: number }>();
    expect(rows).toEqual({ n: 0 });
    expect(await revokedTokens("google"), "Google grant revoked on account deletion").toContain(googleToken);
    expect(await revokedTokens("github"), "GitHub grant revoked on account deletion").toContain(githubToken);
  });
});
