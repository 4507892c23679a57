import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearerLogin, me, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, getSetCookie, roundTrips } from "../../support/http";
import { enrolTotp } from "../../support/mfa";
import { APP_LOGIN, browserSignIn, fragmentOf, profile, sessionCookiesOf } from "../../support/oauth";

// Google and GitHub browser sign-in (session flow) end to end against the fake providers
// (api-spec.md, Identity-provider sign-in; decisions.md, Authentication details): new accounts
// without a password, verified only when the provider says so; a provider account always reaching
// the same account; Google linking by an address both Google and the account have verified (never
// over another Google link), GitHub never by email; inactive accounts;
// the result only in the fragment with no token in the URL and the CSRF cookie cleared; and a
// TOTP account's MFA hand-off, claimed once and completed with a code.

const CLEARED_CSRF = "__Host-relab-oauth=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax";

interface Me {
  id: number;
  email: string;
  username: string;
  is_active: boolean;
  is_verified: boolean;
  totp_enabled: boolean;
  has_usable_password: boolean;
}

/** The callback dropped the CSRF cookie, whatever its outcome. */
function expectCsrfCleared(response: Response): void {
  expect(getSetCookie(response)).toContain(CLEARED_CSRF);
  expect(response.headers.get("cache-control")).toBe("no-store");
}

/** The account a session cookie header speaks for. */
async function meByCookie(cookie: string): Promise<Me> {
  const response = await api("/v1/users/me", { headers: { cookie } });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Me;
}

/** Asserts a successful sign-in (session cookies, `#status=success`) and returns the account. */
async function signedIn(response: Response): Promise<Me> {
  expect(fragmentOf(response)).toEqual({ status: "success" });
  expectCsrfCleared(response);
  const cookie = sessionCookiesOf(response);
  expect(cookie).toMatch(/^__Host-relab-auth=[^;]+; __Host-relab-refresh=[^;]+$/);
  return meByCookie(cookie!);
}

/** Asserts a failed sign-in with `error`: no session, the CSRF cookie cleared. */
function refused(response: Response, error: string): void {
  expect(fragmentOf(response)).toEqual({ status: "error", error });
  expect(new URL(response.headers.get("location")!).search).toBe("");
  expect(sessionCookiesOf(response)).toBeNull();
  expectCsrfCleared(response);
}

const links = async (userId: number) =>
  (
    await env.DB.prepare("SELECT provider, account_id, account_email FROM oauth_accounts WHERE user_id = ? ORDER BY provider")
      .bind(userId)
      .all()
  ).results;

const accountsWithEmail = async (email: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?").bind(email.toLowerCase()).first<{ n: number }>())!.n;

describe("a first sign-in", () => {
  it.each([
    ["google", true],
    ["google", false],
    ["github", true],
    ["github", false],
  ] as const)(
    "with %s (email verified: %s) creates an account without a password, verified as the provider says",
    async (provider, verified) => {
      const who = profile({ email_verified: verified });
      const account = await signedIn(await browserSignIn(provider, who));
      expect(account).toMatchObject({
        email: who.email,
        is_active: true,
        is_verified: verified,
        totp_enabled: false,
        has_usable_password: false,
      });
      const row = await env.DB.prepare("SELECT hashed_password FROM users WHERE id = ?").bind(account.id).first();
      expect(row).toEqual({ hashed_password: null });
      // GitHub ids are numbers (the fake derives one from the sub); Google's is the OpenID `sub`.
      expect(await links(account.id)).toEqual([
        { provider, account_id: provider === "google" ? who.sub : expect.stringMatching(/^\d+$/), account_email: who.email },
      ]);
    },
  );

  it("puts the result in the fragment only: no query, no token in the Location, not cacheable", async () => {
    const response = await browserSignIn("google", profile());
    const location = response.headers.get("location")!;
    expect(location).toBe(`${APP_LOGIN}#status=success`);
    expect(new URL(location).search).toBe("");
    const values = getSetCookie(response)
      .filter((cookie) => /^__Host-relab-(auth|refresh)=/.test(cookie))
      .map((cookie) => cookie.split(";")[0]!.split("=")[1]!);
    expect(values).toHaveLength(2);
    for (const token of values) {
      expect(token.length).toBeGreaterThan(20);
      expect(location).not.toContain(token);
      expect(decodeURIComponent(location)).not.toContain(token);
    }
    expect(response.headers.get("cache-control")).toBe("no-store");
  });
});

describe("account creation", () => {
  it.each(["google", "github"] as const)("%s without an address: email_unavailable, no account", async (provider) => {
    const count = async () =>
      env.DB.prepare("SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM oauth_accounts) AS links").first();
    const before = await count();
    refused(await browserSignIn(provider, profile({ email: null })), "email_unavailable");
    expect(await count()).toEqual(before);
  });

  it("picks a free, allowed username from the address", async () => {
    const first = await signedIn(await browserSignIn("google", profile({ email: "admin@oauth-names-a.example" })));
    const second = await signedIn(await browserSignIn("google", profile({ email: "admin@oauth-names-b.example" })));
    expect(first.username).toBe("user_admin");
    expect(second.username).toMatch(/^user_admin_\d+$/);
  });

  it("two first sign-ins of one provider account at once make one account", async () => {
    // Four people, each signing in twice at once: the pairs whose inserts collide are the case.
    const people = Array.from({ length: 4 }, () => profile());
    const answers = await Promise.all(people.flatMap((who) => [browserSignIn("google", who), browserSignIn("google", who)]));
    for (const [index, who] of people.entries()) {
      const [first, second] = await Promise.all([signedIn(answers[2 * index]!), signedIn(answers[2 * index + 1]!)]);
      expect(second.id).toBe(first.id);
      expect(await accountsWithEmail(who.email!)).toBe(1);
    }
  });
});

describe("signing in again", () => {
  it.each(["google", "github"] as const)(
    "with the same %s account reaches the same account, matched by the provider's id",
    async (provider) => {
      const who = profile();
      const first = await signedIn(await browserSignIn(provider, who));
      const again = await browserSignIn(provider, who);
      // The state's nonce, the linked account, the link's fresh tokens, the session.
      expect(roundTrips(again)).toBe(4);
      const second = await signedIn(again);
      expect(second.id).toBe(first.id);
      // The provider now reports another address: still the same account, and no new one.
      const moved = { ...who, email: `moved-${who.email}` };
      const third = await signedIn(await browserSignIn(provider, moved));
      expect(third).toMatchObject({ id: first.id, email: who.email });
      expect(await accountsWithEmail(who.email!)).toBe(1);
      expect(await accountsWithEmail(moved.email)).toBe(0);
      expect(await links(first.id)).toEqual([expect.objectContaining({ provider, account_email: moved.email })]);
    },
  );
});

describe("an address that already has an account", () => {
  it("is linked to Google when both Google and the account have verified it, and the password account then signs in with Google", async () => {
    const user = await verifiedUser("oauthjoin");
    const who = profile({ email: user.email, email_verified: true });
    const account = await signedIn(await browserSignIn("google", who));
    // The same account, which keeps its password.
    expect(account).toMatchObject({ id: user.id, email: user.email, has_usable_password: true, is_verified: true });
    expect(await links(user.id)).toEqual([{ provider: "google", account_id: who.sub, account_email: user.email }]);
    expect((await signedIn(await browserSignIn("google", who))).id).toBe(user.id);
    const tokens = await bearerLogin(user);
    expect(((await (await me(tokens.access_token)).json()) as Me).id).toBe(user.id);
    expect(await accountsWithEmail(user.email)).toBe(1);
  });

  it("is not joined while the account has not verified it, even when Google has: account_exists, no link, still unverified", async () => {
    // The account may be someone else's squat on the address (its password, its TOTP).
    const user = await registerUser();
    const who = profile({ email: user.email, email_verified: true });
    refused(await browserSignIn("google", who), "account_exists");
    expect(await links(user.id)).toEqual([]);
    const row = await env.DB.prepare("SELECT is_verified FROM users WHERE id = ?").bind(user.id).first<{ is_verified: number }>();
    expect(row).toEqual({ is_verified: 0 });
    expect(await accountsWithEmail(user.email)).toBe(1);
    // Still refused the second time: the failed attempt left nothing behind to sign in with.
    refused(await browserSignIn("google", who), "account_exists");
  });

  it("a verified account already linked to another Google account keeps that link: link_exists", async () => {
    const user = await verifiedUser("oauthtwice");
    const first = profile({ email: user.email });
    expect((await signedIn(await browserSignIn("google", first))).id).toBe(user.id);
    // A second Google account with the same verified address does not take the account over.
    refused(await browserSignIn("google", profile({ email: user.email })), "link_exists");
    expect(await links(user.id)).toEqual([{ provider: "google", account_id: first.sub, account_email: user.email }]);
    expect((await signedIn(await browserSignIn("google", first))).id).toBe(user.id);
  });

  it("is matched whatever the case of the address Google reports", async () => {
    const user = await verifiedUser("oauthcase");
    const account = await signedIn(await browserSignIn("google", profile({ email: user.email.toUpperCase() })));
    expect(account.id).toBe(user.id);
  });

  it("is not linked to Google for another address that merely shares its canonical mailbox", async () => {
    // `name+tag@` is the account's mailbox only where the domain does sub-addressing; elsewhere it
    // can be someone else's. Google verified the other address, not the account's: no link.
    const user = await verifiedUser("oauthtag");
    const other = user.email.replace("@", "+other@");
    const response = await browserSignIn("google", profile({ email: other, email_verified: true }));
    expect(fragmentOf(response)).toMatchObject({ status: "error" });
    expect(sessionCookiesOf(response)).toBeNull();
    expect(await links(user.id)).toEqual([]);
  });

  it("is not linked to Google when Google has not verified it: email_not_verified", async () => {
    const user = await verifiedUser("oauthunv");
    refused(await browserSignIn("google", profile({ email: user.email, email_verified: false })), "email_not_verified");
    expect(await links(user.id)).toEqual([]);
    expect(await accountsWithEmail(user.email)).toBe(1);
  });

  it.each([true, false])("is never linked to GitHub by address (verified: %s): account_exists", async (verified) => {
    const user = await verifiedUser("oauthgh");
    const who = profile({ email: user.email, email_verified: verified });
    refused(await browserSignIn("github", who), "account_exists");
    expect(await links(user.id)).toEqual([]);
    expect(await accountsWithEmail(user.email)).toBe(1);
    // Still refused the second time: the failed attempt left nothing behind to sign in with.
    refused(await browserSignIn("github", who), "account_exists");
  });
});

describe("an inactive account", () => {
  it.each(["google", "github"] as const)("linked to %s cannot sign in: account_inactive", async (provider) => {
    const who = profile();
    const account = await signedIn(await browserSignIn(provider, who));
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(account.id).run();
    refused(await browserSignIn(provider, who), "account_inactive");
  });

  it("holding Google's verified address is neither linked nor signed in: account_inactive", async () => {
    const user = await verifiedUser("oauthoff");
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(user.id).run();
    refused(await browserSignIn("google", profile({ email: user.email })), "account_inactive");
    expect(await links(user.id)).toEqual([]);
  });
});

describe("an account with TOTP", () => {
  it("gets an MFA hand-off instead of a session, claims it once, and completes the sign-in with a code", async () => {
    const user = await verifiedUser("oauthtotp");
    const { authenticator } = await enrolTotp(user.tokens.access_token, user.password);
    const who = profile({ email: user.email });

    const response = await browserSignIn("google", who);
    expectCsrfCleared(response);
    expect(sessionCookiesOf(response)).toBeNull();
    const fragment = fragmentOf(response);
    expect(Object.keys(fragment).sort()).toEqual(["mfa_handoff", "status"]);
    expect(fragment.status).toBe("mfa_required");
    expect(fragment.mfa_handoff).toMatch(/^[\w-]{20,}$/);
    expect(new URL(response.headers.get("location")!).search).toBe("");

    const claim = await postJson("/v1/auth/mfa/oauth/claim", { mfa_handoff: fragment.mfa_handoff });
    expect(claim.status, await claim.clone().text()).toBe(200);
    expect(claim.headers.get("cache-control")).toBe("no-store");
    const challenge = (await claim.json()) as { mfa_required: true; mfa_token: string };
    expect(challenge).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    // The challenge token itself never travelled in a URL.
    expect(challenge.mfa_token).not.toBe(fragment.mfa_handoff);
    expect(response.headers.get("location")).not.toContain(challenge.mfa_token);

    await expectProblem(await postJson("/v1/auth/mfa/oauth/claim", { mfa_handoff: fragment.mfa_handoff }), 400, "OAUTH_HANDOFF_INVALID");

    // The browser flow's challenge ends like a cookie login's: 204 with the session cookies.
    const answered = await postJson("/v1/auth/mfa/challenge", { mfa_token: challenge.mfa_token, code: authenticator.next() });
    expect(answered.status, await answered.clone().text()).toBe(204);
    const cookie = sessionCookiesOf(answered);
    expect(cookie).not.toBeNull();
    expect(await meByCookie(cookie!)).toMatchObject({ id: user.id, totp_enabled: true });
  });

  it("gets a new hand-off at each sign-in, and an unknown hand-off is refused", async () => {
    const user = await verifiedUser("oauthtotp");
    await enrolTotp(user.tokens.access_token, user.password);
    const who = profile({ email: user.email });
    const first = fragmentOf(await browserSignIn("google", who));
    const second = fragmentOf(await browserSignIn("google", who));
    expect(second.mfa_handoff).not.toBe(first.mfa_handoff);
    await expectProblem(await postJson("/v1/auth/mfa/oauth/claim", { mfa_handoff: `${first.mfa_handoff}x` }), 400, "OAUTH_HANDOFF_INVALID");
    for (const handoff of [first.mfa_handoff, second.mfa_handoff]) {
      expect((await postJson("/v1/auth/mfa/oauth/claim", { mfa_handoff: handoff })).status).toBe(200);
    }
  });
});
