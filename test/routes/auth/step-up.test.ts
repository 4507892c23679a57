import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ageSessions, bearer, bearerLogin, lastEmail, me, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { expectRateLimited } from "../../support/limits";
import { enrolTotp } from "../../support/mfa";

// The spec's Step-up table, row by row, and the one budget of wrong secrets the rows share with
// the login challenge. Link/unlink of identity providers come with the OAuth routes.

const WRONG_SECRET_POLICY = '"wrong-secret-minute";q=3;w=60, "wrong-secret-day";q=100;w=86400';

async function totpUser() {
  const user = await verifiedUser("stepup");
  const enrolment = await enrolTotp(user.tokens.access_token, user.password);
  return { ...user, ...enrolment, token: enrolment.tokens.access_token };
}

const deleteMe = (token: string, body?: object) =>
  api("/v1/users/me", {
    method: "DELETE",
    headers: { ...bearer(token), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

describe("step-up: changing the email or password with TOTP", () => {
  it("needs mfa_code besides the password: missing 400, wrong 403, right 200", async () => {
    const user = await totpUser();
    const email = `moved.${user.email}`;
    await expectProblem(await patchMe(user.token, { email, current_password: user.password }), 400, "MFA_CODE_REQUIRED");
    await expectProblem(
      await patchMe(user.token, { email, current_password: user.password, mfa_code: user.authenticator.stale() }),
      403,
      "MFA_CODE_INVALID",
    );
    const moved = await patchMe(user.token, { email, current_password: user.password, mfa_code: user.authenticator.next() });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ email, is_verified: false });
    // The States table: every token revoked, a verification link to the new address, a notice to the old.
    expect((await me(user.token)).status).toBe(401);
    await lastEmail(email, "Confirm your email");
    await lastEmail(user.email, "email address was changed");
  });

  it("takes a recovery code instead, and spends it", async () => {
    const user = await totpUser();
    const newPassword = "quiet-meadow-61-lantern";
    const code = user.recoveryCodes[0]!;
    const changed = await patchMe(user.token, { password: newPassword, current_password: user.password, mfa_code: code });
    expect(changed.status).toBe(200);
    const tokens = await postJson("/v1/auth/bearer/login", { username: user.email, password: newPassword });
    expect(tokens.status).toBe(202);
    const { mfa_token } = (await tokens.json()) as { mfa_token: string };
    await expectProblem(await postJson("/v1/auth/mfa/challenge", { mfa_token, code }), 401, "MFA_CODE_INVALID");
  });
});

describe("step-up comes after every check that needs no secret", () => {
  it("a change refused for another reason (422, 409) does not spend the code", async () => {
    const user = await totpUser();
    const taken = await verifiedUser("taken");
    const code = user.recoveryCodes[4]!;
    await expectProblem(
      await patchMe(user.token, { password: "short", current_password: user.password, mfa_code: code }),
      422,
      "PASSWORD_REJECTED",
    );
    await expectProblem(
      await patchMe(user.token, { email: taken.email, current_password: user.password, mfa_code: code }),
      409,
      "EMAIL_ALREADY_REGISTERED",
    );
    // The recovery code is still there: it signs in.
    const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
    const { mfa_token } = (await login.json()) as { mfa_token: string };
    expect((await postJson("/v1/auth/mfa/challenge", { mfa_token, code })).status).toBe(200);
  });

  it("an account deletion that would remove the last superuser is 409 before any secret is checked", async () => {
    const user = await totpUser();
    await env.DB.prepare("UPDATE users SET is_superuser = 0 WHERE is_superuser = 1").run();
    await env.DB.prepare("UPDATE users SET is_superuser = 1, role = 'lab' WHERE id = ?").bind(user.id).run();
    const code = user.recoveryCodes[5]!;
    await expectProblem(await deleteMe(user.token, { current_password: "not-even-checked", mfa_code: code }), 409, "LAST_SUPERUSER");
    const left = await env.DB.prepare("SELECT count(*) AS n FROM recovery_codes WHERE user_id = ?").bind(user.id).first();
    expect(left).toEqual({ n: 10 });
  });
});

describe("step-up: DELETE /v1/users/me", () => {
  it("a password account: missing password 400, wrong 403, right 204", async () => {
    const user = await verifiedUser("stepup");
    await expectProblem(await deleteMe(user.tokens.access_token), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(
      await deleteMe(user.tokens.access_token, { current_password: "wrong-password-here" }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    expect((await deleteMe(user.tokens.access_token, { current_password: user.password })).status).toBe(204);
  });

  it("with TOTP also mfa_code, regardless of the password", async () => {
    const user = await totpUser();
    await expectProblem(await deleteMe(user.token, { current_password: user.password }), 400, "MFA_CODE_REQUIRED");
    await expectProblem(await deleteMe(user.token, { mfa_code: user.authenticator.peek() }), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(await deleteMe(user.token, { current_password: user.password, mfa_code: "000000" }), 403, "MFA_CODE_INVALID");
    expect((await deleteMe(user.token, { current_password: user.password, mfa_code: user.authenticator.next() })).status).toBe(204);
  });

  it("an account with neither password nor TOTP: a sign-in within 10 minutes, else 403", async () => {
    // Accounts without a password come from identity-provider sign-in (OAuth issue); the state is set directly here.
    const stale = await verifiedUser("stepup");
    await env.DB.prepare("UPDATE users SET hashed_password = NULL WHERE id = ?").bind(stale.id).run();
    await ageSessions(stale.id, 601);
    await expectProblem(await deleteMe(stale.tokens.access_token), 403, "RECENT_SIGN_IN_REQUIRED");
    const recent = await verifiedUser("stepup");
    await env.DB.prepare("UPDATE users SET hashed_password = NULL WHERE id = ?").bind(recent.id).run();
    await ageSessions(recent.id, 540);
    expect((await deleteMe(recent.tokens.access_token)).status).toBe(204);
  });

  it("counts the sign-in of the request's own session: a fresh sign-in elsewhere does not vouch for an old session", async () => {
    const user = await verifiedUser("stepup");
    const old = user.tokens;
    await ageSessions(user.id, 3600);
    // A new sign-in on another device, moments ago.
    const fresh = await bearerLogin(user);
    await env.DB.prepare("UPDATE users SET hashed_password = NULL WHERE id = ?").bind(user.id).run();
    await expectProblem(await deleteMe(old.access_token), 403, "RECENT_SIGN_IN_REQUIRED");

    // Refreshing the old session does not make its sign-in recent.
    const refreshed = await postJson("/v1/auth/bearer/refresh", { refresh_token: old.refresh_token });
    expect(refreshed.status).toBe(200);
    const { access_token } = (await refreshed.json()) as { access_token: string };
    await expectProblem(await deleteMe(access_token), 403, "RECENT_SIGN_IN_REQUIRED");

    expect((await deleteMe(fresh.access_token)).status).toBe(204);
  });

  it("refuses a session whose sign-in time was never recorded (started before it was kept)", async () => {
    const user = await verifiedUser("stepup");
    await env.DB.prepare("UPDATE users SET hashed_password = NULL WHERE id = ?").bind(user.id).run();
    await env.DB.prepare("UPDATE refresh_tokens SET session_started_at = NULL WHERE user_id = ?").bind(user.id).run();
    // The session itself still works.
    expect((await me(user.tokens.access_token)).status).toBe(200);
    await expectProblem(await deleteMe(user.tokens.access_token), 403, "RECENT_SIGN_IN_REQUIRED");
  });

  it("an account without a password but with TOTP: the code alone, however old the sign-in", async () => {
    const user = await totpUser();
    await env.DB.prepare("UPDATE users SET hashed_password = NULL WHERE id = ?").bind(user.id).run();
    await ageSessions(user.id, 3600);
    await expectProblem(await deleteMe(user.token, {}), 400, "MFA_CODE_REQUIRED");
    expect((await deleteMe(user.token, { mfa_code: user.authenticator.next() })).status).toBe(204);
  });
});

describe("step-up: turning TOTP on without a password", () => {
  it("needs a sign-in within 10 minutes", async () => {
    const user = await verifiedUser("stepup");
    await env.DB.prepare("UPDATE users SET hashed_password = NULL WHERE id = ?").bind(user.id).run();
    await ageSessions(user.id, 601);
    const setup = await postJson("/v1/auth/mfa/totp/setup", {}, bearer(user.tokens.access_token));
    const { setup_token } = (await setup.json()) as { setup_token: string };
    const confirmed = await postJson("/v1/auth/mfa/totp/confirm", { setup_token, code: "123456" }, bearer(user.tokens.access_token));
    await expectProblem(confirmed, 403, "RECENT_SIGN_IN_REQUIRED");
    await ageSessions(user.id, 540);
    const enrolment = await enrolTotp(user.tokens.access_token, undefined);
    expect(enrolment.recoveryCodes).toHaveLength(10);
    // The enrolling device's new session keeps the old one's sign-in time: nobody signed in again.
    const sessions = await env.DB.prepare("SELECT session_started_at - unixepoch() AS age FROM refresh_tokens WHERE user_id = ?")
      .bind(user.id)
      .all<{ age: number }>();
    expect(sessions.results.map((row) => row.age)).toEqual([expect.any(Number)]);
    expect(sessions.results[0]!.age).toBeLessThanOrEqual(-539);
  });
});

describe("one budget of wrong secrets per account: challenge and step-ups together", () => {
  it("3 wrong codes at the login challenge: the 4th attempt is 429 even with the right code", async () => {
    const user = await totpUser();
    const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
    const { mfa_token } = (await login.json()) as { mfa_token: string };
    for (let i = 0; i < 3; i++) {
      await expectProblem(await postJson("/v1/auth/mfa/challenge", { mfa_token, code: "00000" + i }), 401, "MFA_CODE_INVALID");
    }
    await expectRateLimited(await postJson("/v1/auth/mfa/challenge", { mfa_token, code: user.authenticator.peek() }), WRONG_SECRET_POLICY);
  });

  it("a wrong code at the challenge, a wrong password at PATCH /users/me and a wrong code at TOTP disable spend it together", async () => {
    const user = await totpUser();
    const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
    const { mfa_token } = (await login.json()) as { mfa_token: string };
    await expectProblem(await postJson("/v1/auth/mfa/challenge", { mfa_token, code: "000000" }), 401, "MFA_CODE_INVALID");
    await expectProblem(
      await patchMe(user.token, { email: user.email, current_password: "wrong-password-x", mfa_code: user.authenticator.peek() }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    await expectProblem(
      await postJson("/v1/auth/mfa/totp/disable", { code: "111111", current_password: user.password }, bearer(user.token)),
      403,
      "MFA_CODE_INVALID",
    );
    await expectRateLimited(
      await deleteMe(user.token, { current_password: user.password, mfa_code: user.authenticator.peek() }),
      WRONG_SECRET_POLICY,
    );
    await expectRateLimited(await postJson("/v1/auth/mfa/challenge", { mfa_token, code: user.authenticator.peek() }), WRONG_SECRET_POLICY);
    await expectRateLimited(
      await postJson("/v1/auth/mfa/recovery-codes/regenerate", { code: user.recoveryCodes[0] }, bearer(user.token)),
      WRONG_SECRET_POLICY,
    );
  });

  it("a missing credential (400) does not count", async () => {
    const user = await totpUser();
    for (let i = 0; i < 5; i++) {
      await expectProblem(await deleteMe(user.token, { current_password: user.password }), 400, "MFA_CODE_REQUIRED");
      await expectProblem(await patchMe(user.token, { email: user.email }), 400, "CURRENT_PASSWORD_REQUIRED");
    }
    expect((await deleteMe(user.token, { current_password: user.password, mfa_code: user.authenticator.next() })).status).toBe(204);
  });
});
