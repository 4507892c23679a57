import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openFieldText, parseDataKey, singleKeyRing } from "../../../src/lib/data-encryption";
import { ageSessions, bearer, verifiedUser } from "../../support/accounts";
import { api, expectProblem, getSetCookie, roundTrips } from "../../support/http";
import { enrolTotp } from "../../support/mfa";
import {
  APP_ACCOUNT,
  APP_LOGIN,
  associateAuthorize,
  associations,
  browserSignIn,
  consent,
  csrfCookieOf,
  fragmentOf,
  linkProvider,
  profile,
  sessionCookiesOf,
} from "../../support/oauth";

// Linking a provider to a signed-in account: the step-up in front of it, the GitHub association
// (GitHub never links by address), the video association's offline grant, a link never silently
// replacing another account of the provider (link_exists), and what an associate callback must
// never do (start a session, put a token in a URL).

const SUCCESS = `${APP_ACCOUNT}#status=success`;

/** The `Location` of a callback, asserted to carry no provider token. */
function locationOf(response: Response): string {
  expect(response.status).toBe(302);
  const location = response.headers.get("location")!;
  expect(location).not.toMatch(/goog-|gho_|token/i);
  return location;
}

/** The id behind a bearer token or the session cookies. */
async function meId(auth: Record<string, string>): Promise<number> {
  const response = await api("/v1/users/me", { headers: auth });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

/** An account created by a Google sign-in: no password, no TOTP; signed in just now with session cookies. */
async function googleOnlyAccount() {
  const who = profile();
  const signedIn = await browserSignIn("google", who);
  expect(fragmentOf(signedIn)).toEqual({ status: "success" });
  const auth = { cookie: sessionCookiesOf(signedIn)! };
  return { who, auth, id: await meId(auth) };
}

describe("POST /v1/oauth/{provider}/associate/authorize: the step-up", () => {
  it("needs a signed-in caller", async () => {
    await expectProblem(
      await associateAuthorize("github", {}, { current_password: "whatever-it-is-1234" }),
      401,
      "AUTHENTICATION_REQUIRED",
    );
  });

  it("a password account: missing 400, wrong 403, right 200 with the provider URL and the CSRF cookie", async () => {
    const user = await verifiedUser("linkstep");
    const auth = bearer(user.tokens.access_token);
    const missing = await associateAuthorize("github", auth, {});
    await expectProblem(missing, 400, "CURRENT_PASSWORD_REQUIRED");
    expect(csrfCookieOf(missing)).toBeNull();
    await expectProblem(await associateAuthorize("github", auth, undefined), 400, "CURRENT_PASSWORD_REQUIRED");
    const wrong = await associateAuthorize("github", auth, { current_password: `${user.password}x` });
    await expectProblem(wrong, 403, "CURRENT_PASSWORD_INVALID");
    expect(csrfCookieOf(wrong)).toBeNull();

    const right = await associateAuthorize("github", auth, { current_password: user.password });
    expect(right.status, await right.clone().text()).toBe(200);
    expect(right.headers.get("cache-control")).toBe("no-store");
    expect(csrfCookieOf(right)).toMatch(/^__Host-relab-oauth=.+/);
    const { authorization_url } = (await right.json()) as { authorization_url: string };
    const url = new URL(authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe("https://github.oauth.test/login/oauth/authorize");
    expect(url.searchParams.get("redirect_uri")).toBe("http://localhost/v1/oauth/github/associate/callback");
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toBeTruthy();
  });

  it("a TOTP account needs the code too: missing 400, wrong 403, right 200", async () => {
    const user = await verifiedUser("linktotp");
    const { authenticator, tokens } = await enrolTotp(user.tokens.access_token, user.password);
    const auth = bearer(tokens.access_token);
    await expectProblem(await associateAuthorize("google", auth, { current_password: user.password }), 400, "MFA_CODE_REQUIRED");
    await expectProblem(await associateAuthorize("google", auth, { mfa_code: authenticator.peek() }), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(
      await associateAuthorize("google", auth, { current_password: user.password, mfa_code: authenticator.stale() }),
      403,
      "MFA_CODE_INVALID",
    );
    const right = await associateAuthorize("google", auth, { current_password: user.password, mfa_code: authenticator.next() });
    expect(right.status, await right.clone().text()).toBe(200);
    expect(csrfCookieOf(right)).not.toBeNull();
  });

  it("an account with neither password nor TOTP needs a sign-in within 10 minutes", async () => {
    const account = await googleOnlyAccount();
    const fresh = await associateAuthorize("github", account.auth, undefined);
    expect(fresh.status, await fresh.clone().text()).toBe(200);
    expect(csrfCookieOf(fresh)).not.toBeNull();
    expect((await associateAuthorize("github", account.auth, {})).status).toBe(200);

    await ageSessions(account.id, 660);
    const stale = await associateAuthorize("github", account.auth, {});
    await expectProblem(stale, 403, "RECENT_SIGN_IN_REQUIRED");
    expect(csrfCookieOf(stale)).toBeNull();
  });
});

describe("a link begun before the account's sessions were revoked", () => {
  it("is refused at the callback with session_revoked once the account signed out everywhere, and nothing is linked", async () => {
    const user = await verifiedUser("linkrev");
    const auth = bearer(user.tokens.access_token);
    const start = await associateAuthorize("github", auth, { current_password: user.password });
    expect(start.status, await start.clone().text()).toBe(200);
    const cookie = csrfCookieOf(start)!;
    const { authorization_url } = (await start.json()) as { authorization_url: string };

    // Someone who had the session (and the password) began the link; the owner signs out everywhere.
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: auth })).status).toBe(204);
    const callback = await consent(authorization_url, profile());
    const refused = await api(`${callback.pathname}${callback.search}`, { headers: { cookie }, redirect: "manual" });
    expect(locationOf(refused)).toBe(`${APP_ACCOUNT}#status=error&error=session_revoked`);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM oauth_accounts WHERE user_id = ?").bind(user.id).first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });
});

describe("linking GitHub explicitly", () => {
  it("links, lists the link, and a GitHub sign-in then reaches the same account", async () => {
    const user = await verifiedUser("linkgh");
    const auth = bearer(user.tokens.access_token);
    // The GitHub account carries the same address: GitHub never links by address, so before the
    // link a GitHub sign-in is refused rather than reaching (or taking over) this account.
    const who = profile({ email: user.email });
    expect(fragmentOf(await browserSignIn("github", who))).toEqual({ status: "error", error: "account_exists" });

    const callback = await linkProvider("github", auth, { current_password: user.password }, who);
    expect(locationOf(callback)).toBe(SUCCESS);
    // The state's nonce spent; the link written, guarded by the account's state, in one statement.
    expect(roundTrips(callback)).toBe(2);
    expect(sessionCookiesOf(callback)).toBeNull();
    expect(await associations(auth)).toEqual([
      { provider: "github", account_email: user.email, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    ]);

    const signedIn = await browserSignIn("github", who);
    expect(locationOf(signedIn)).toBe(`${APP_LOGIN}#status=success`);
    const cookies = sessionCookiesOf(signedIn);
    expect(cookies).not.toBeNull();
    expect(await meId({ cookie: cookies! })).toBe(user.id);
  });

  it("refuses a GitHub account already linked to another account: error=already_linked, nothing changes", async () => {
    const first = await verifiedUser("linkfirst");
    const second = await verifiedUser("linksecond");
    const who = profile();
    expect(locationOf(await linkProvider("github", bearer(first.tokens.access_token), { current_password: first.password }, who))).toBe(
      SUCCESS,
    );

    const taken = await linkProvider("github", bearer(second.tokens.access_token), { current_password: second.password }, who);
    expect(locationOf(taken)).toBe(`${APP_ACCOUNT}#status=error&error=already_linked`);
    expect(fragmentOf(taken)).toEqual({ status: "error", error: "already_linked" });
    expect(await associations(bearer(second.tokens.access_token))).toEqual([]);
    expect((await associations(bearer(first.tokens.access_token))).map((link) => link.provider)).toEqual(["github"]);
    expect(await meId({ cookie: sessionCookiesOf(await browserSignIn("github", who))! })).toBe(first.id);
  });

  it("a callback without the CSRF cookie links nothing", async () => {
    const user = await verifiedUser("linkcsrf");
    const auth = bearer(user.tokens.access_token);
    const start = await associateAuthorize("github", auth, { current_password: user.password });
    const { authorization_url } = (await start.json()) as { authorization_url: string };
    const callback = await consent(authorization_url, profile());
    const response = await api(`${callback.pathname}${callback.search}`, { redirect: "manual" });
    expect(locationOf(response)).toBe(`${APP_ACCOUNT}#status=error&error=invalid_state`);
    expect(await associations(auth)).toEqual([]);
  });
});

describe("an account that already has a link of the provider", () => {
  /** The account's link of `provider` as D1 holds it. */
  const linkRow = (userId: number, provider: string) =>
    env.DB.prepare(
      "SELECT id, account_id, account_email, access_token_sealed, refresh_token_sealed FROM oauth_accounts WHERE user_id = ? AND provider = ?",
    )
      .bind(userId, provider)
      .first<{
        id: number;
        account_id: string;
        account_email: string | null;
        access_token_sealed: string;
        refresh_token_sealed: string | null;
      }>();

  it.each(["github", "google-youtube"])(
    "%s: linking another account of the provider is refused with link_exists, the old link stays",
    async (provider) => {
      const user = await verifiedUser("linkexists");
      const auth = bearer(user.tokens.access_token);
      const first = profile();
      expect(locationOf(await linkProvider(provider, auth, { current_password: user.password }, first))).toBe(SUCCESS);
      const before = await linkRow(user.id, provider);
      expect(before).not.toBeNull();

      const other = profile();
      const refused = await linkProvider(provider, auth, { current_password: user.password }, other);
      expect(locationOf(refused)).toBe(`${APP_ACCOUNT}#status=error&error=link_exists`);
      expect(fragmentOf(refused)).toEqual({ status: "error", error: "link_exists" });
      expect(sessionCookiesOf(refused)).toBeNull();
      // Nothing of the old link changed (account, tokens), and the other account is linked nowhere.
      expect(await linkRow(user.id, provider)).toEqual(before);
      const elsewhere = await env.DB.prepare("SELECT count(*) AS n FROM oauth_accounts WHERE provider = ? AND account_email = ?")
        .bind(provider, other.email)
        .first<{ n: number }>();
      expect(elsewhere).toEqual({ n: 0 });
      if (provider === "github") expect(await meId({ cookie: sessionCookiesOf(await browserSignIn("github", first))! })).toBe(user.id);
    },
  );

  it.each(["github", "google-youtube"])("%s: linking the same account again refreshes the link", async (provider) => {
    const user = await verifiedUser("linkrefresh");
    const auth = bearer(user.tokens.access_token);
    const who = profile();
    expect(locationOf(await linkProvider(provider, auth, { current_password: user.password }, who))).toBe(SUCCESS);
    const before = (await linkRow(user.id, provider))!;

    const moved = { ...who, email: `moved-${who.email}` };
    expect(locationOf(await linkProvider(provider, auth, { current_password: user.password }, moved))).toBe(SUCCESS);
    const after = (await linkRow(user.id, provider))!;
    expect(after).toMatchObject({ id: before.id, account_id: before.account_id, account_email: moved.email });
    // The new grant's tokens replaced the old ones.
    const key = singleKeyRing(parseDataKey(env.DATA_ENCRYPTION_KEY));
    const context = `oauth:${provider}:${before.account_id}`;
    expect(await openFieldText(key, after.access_token_sealed, context)).not.toBe(
      await openFieldText(key, before.access_token_sealed, context),
    );
    expect((await associations(auth)).map((link) => link.provider)).toEqual([provider]);
  });
});

describe("linking the video platform (google-youtube)", () => {
  it("asks for the YouTube scope and an offline grant", async () => {
    const user = await verifiedUser("linkyt");
    const start = await associateAuthorize("google-youtube", bearer(user.tokens.access_token), { current_password: user.password });
    expect(start.status, await start.clone().text()).toBe(200);
    const url = new URL(((await start.json()) as { authorization_url: string }).authorization_url);
    expect(`${url.origin}${url.pathname}`).toBe("https://google.oauth.test/o/oauth2/v2/auth");
    expect(url.searchParams.get("scope")!.split(" ")).toContain("https://www.googleapis.com/auth/youtube");
    expect(url.searchParams.get("access_type")).toBe("offline");
    expect(url.searchParams.get("prompt")).toBe("consent");
    expect(url.searchParams.get("redirect_uri")).toBe("http://localhost/v1/oauth/google-youtube/associate/callback");
  });

  it("stores the refresh token sealed, and starts no session", async () => {
    const user = await verifiedUser("linkytrt");
    const auth = bearer(user.tokens.access_token);
    const who = profile();
    const callback = await linkProvider("google-youtube", auth, { current_password: user.password }, who);
    expect(locationOf(callback)).toBe(SUCCESS);
    // Only the spent CSRF cookie is cleared: no session cookie from an associate callback.
    expect(sessionCookiesOf(callback)).toBeNull();
    expect(getSetCookie(callback).every((cookie) => cookie.startsWith("__Host-relab-oauth="))).toBe(true);

    const rows = await env.DB.prepare(
      "SELECT provider, account_id, account_email, access_token_sealed, refresh_token_sealed FROM oauth_accounts WHERE user_id = ?",
    )
      .bind(user.id)
      .all<{
        provider: string;
        account_id: string;
        account_email: string;
        access_token_sealed: string | null;
        refresh_token_sealed: string | null;
      }>();
    expect(rows.results).toHaveLength(1);
    const row = rows.results[0]!;
    expect(row).toMatchObject({ provider: "google-youtube", account_id: who.sub, account_email: who.email });
    expect(row.refresh_token_sealed).not.toBeNull();
    expect(row.refresh_token_sealed).not.toContain("goog-rt-");
    expect(row.access_token_sealed).not.toBeNull();
    expect(row.access_token_sealed).not.toContain("goog-at-");
    // Sealed, not lost: it opens (for this provider account only) to the fake's refresh token.
    const key = singleKeyRing(parseDataKey(env.DATA_ENCRYPTION_KEY));
    expect(await openFieldText(key, row.refresh_token_sealed!, `oauth:google-youtube:${who.sub}`)).toMatch(/^goog-rt-[0-9a-f]{32}$/);
    await expect(openFieldText(key, row.refresh_token_sealed!, `oauth:google-youtube:${who.sub}x`)).rejects.toThrow();

    expect((await associations(auth)).map((link) => link.provider)).toEqual(["google-youtube"]);
  });

  it("is not a sign-in provider: no session authorize route", async () => {
    const response = await api(`/v1/oauth/google-youtube/session/authorize?redirect_uri=${encodeURIComponent(APP_LOGIN)}`);
    const problem = await expectProblem(response, 422, "VALIDATION_FAILED");
    expect(JSON.stringify(problem)).toContain("provider");
    expect(csrfCookieOf(response)).toBeNull();
  });
});
