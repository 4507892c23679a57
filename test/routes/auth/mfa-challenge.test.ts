import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, me, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, getSetCookie, roundTrips } from "../../support/http";
import { bearerLoginWithCode, enrolTotp } from "../../support/mfa";

async function totpUser() {
  const user = await verifiedUser("mfa");
  const enrolment = await enrolTotp(user.tokens.access_token, user.password);
  return { ...user, ...enrolment };
}

async function challenge(user: { email: string; password: string }, transport: "bearer" | "session" = "bearer"): Promise<string> {
  const response = await postJson(`/v1/auth/${transport}/login`, { username: user.email, password: user.password });
  expect(response.status).toBe(202);
  expect(getSetCookie(response)).toEqual([]);
  const body = (await response.json()) as { mfa_required: boolean; mfa_token: string };
  expect(body.mfa_required).toBe(true);
  expect(Object.keys(body).sort()).toEqual(["mfa_required", "mfa_token"]);
  return body.mfa_token;
}

const answer = (mfa_token: string, code: string) => postJson("/v1/auth/mfa/challenge", { mfa_token, code });

describe("the login challenge", () => {
  it("a bearer login of a TOTP account gets 202 and a challenge; a current code turns it into a token pair", async () => {
    const user = await totpUser();
    const before = await env.DB.prepare("SELECT last_login_at FROM users WHERE id = ?").bind(user.id).first<{ last_login_at: number }>();
    const response = await answer(await challenge(user), user.authenticator.next());
    expect(response.status).toBe(200);
    // Read the challenge with the sealed seed; then one batch claims, spends and starts the session.
    expect(roundTrips(response)).toBe(2);
    const tokens = (await response.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 900 });
    expect((await me(tokens.access_token)).status).toBe(200);
    const after = await env.DB.prepare("SELECT last_login_at FROM users WHERE id = ?").bind(user.id).first<{ last_login_at: number }>();
    expect(after!.last_login_at).toBeGreaterThanOrEqual(before!.last_login_at);
  });

  it("a session login's challenge sets the cookies (204) and no tokens in the body", async () => {
    const user = await totpUser();
    const response = await answer(await challenge(user, "session"), user.authenticator.next());
    expect(response.status).toBe(204);
    const cookie = getSetCookie(response)
      .map((value) => value.split(";")[0])
      .join("; ");
    expect(cookie).toMatch(/^__Host-relab-auth=[^;]+; __Host-relab-refresh=.+$/);
    expect((await api("/v1/users/me", { headers: { cookie } })).status).toBe(200);
  });

  it("a cross-site browser answering a challenge is refused like a cross-site login", async () => {
    const user = await totpUser();
    const mfa_token = await challenge(user, "session");
    const response = await postJson(
      "/v1/auth/mfa/challenge",
      { mfa_token, code: user.authenticator.peek() },
      { "sec-fetch-site": "cross-site" },
    );
    await expectProblem(response, 403, "CROSS_SITE_REQUEST_REFUSED");
  });

  it("a wrong code is 401 and leaves the challenge usable; the challenge then works once", async () => {
    const user = await totpUser();
    const token = await challenge(user);
    await expectProblem(await answer(token, user.authenticator.stale()), 401, "MFA_CODE_INVALID");
    await expectProblem(await answer(token, "abcde-fghij"), 401, "MFA_CODE_INVALID");
    expect((await answer(token, user.authenticator.next())).status).toBe(200);
    await expectProblem(await answer(token, user.authenticator.next()), 401, "MFA_TOKEN_INVALID");
  });

  it("an accepted code cannot be used again, not even at another login", async () => {
    const user = await totpUser();
    expect((await answer(await challenge(user), user.authenticator.next())).status).toBe(200);
    await expectProblem(await answer(await challenge(user), user.authenticator.replay()), 401, "MFA_CODE_INVALID");
  });

  it("two logins answering with the same code at once: exactly one signs in", async () => {
    const user = await totpUser();
    const [first, second] = await Promise.all([challenge(user), challenge(user)]);
    const code = user.authenticator.next();
    const responses = await Promise.all([answer(first, code), answer(second, code)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it("one challenge answered twice at once with two valid codes: exactly one session", async () => {
    const user = await totpUser();
    const token = await challenge(user);
    const responses = await Promise.all([answer(token, user.authenticator.next()), answer(token, user.recoveryCodes[0]!)]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 401]);
    const sessions = await env.DB.prepare("SELECT count(DISTINCT family_id) AS n FROM refresh_tokens WHERE user_id = ?")
      .bind(user.id)
      .first();
    // The enrolment's own session, and one from this login.
    expect(sessions).toEqual({ n: 2 });
  });

  it("a recovery code signs in once, then is spent", async () => {
    const user = await totpUser();
    const code = user.recoveryCodes[3]!;
    expect((await bearerLoginWithCode(user, code)).access_token).toBeTruthy();
    await expectProblem(await answer(await challenge(user), code), 401, "MFA_CODE_INVALID");
    const left = await env.DB.prepare("SELECT count(*) AS n FROM recovery_codes WHERE user_id = ?").bind(user.id).first();
    expect(left).toEqual({ n: 9 });
  });

  it("unknown, expired and revoked challenges are 401", async () => {
    const user = await totpUser();
    await expectProblem(await answer("not-a-challenge-token", user.authenticator.peek()), 401, "MFA_TOKEN_INVALID");
    const expired = await challenge(user);
    await env.DB.prepare("UPDATE mfa_challenges SET expires_at = unixepoch() - 1 WHERE user_id = ?").bind(user.id).run();
    await expectProblem(await answer(expired, user.authenticator.peek()), 401, "MFA_TOKEN_INVALID");
    // Signing out everywhere between the password and the code ends the pending challenge too.
    const pending = await challenge(user);
    expect((await postJson("/v1/auth/sessions/revoke-all", {}, bearer(user.tokens.access_token))).status).toBe(204);
    await expectProblem(await answer(pending, user.authenticator.peek()), 401, "MFA_TOKEN_INVALID");
  });

  it("the challenge token is stored only as a fingerprint", async () => {
    const user = await totpUser();
    const token = await challenge(user);
    const rows = await env.DB.prepare("SELECT fingerprint, transport FROM mfa_challenges WHERE user_id = ?")
      .bind(user.id)
      .all<{ fingerprint: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.results[0]!.fingerprint).not.toBe(token);
  });

  it("a wrong password never reaches the challenge", async () => {
    const user = await totpUser();
    const response = await postJson("/v1/auth/bearer/login", { username: user.email, password: "definitely-not-it-123" });
    await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
  });
});
