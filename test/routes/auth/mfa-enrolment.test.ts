import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { base32Decode, normalizeRecoveryCode, recoveryCodeHash, totp } from "../../../src/auth/totp";
import { bearer, bearerLogin, me, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, getSetCookie, roundTrips } from "../../support/http";
import { awayFromStepEnd, bearerLoginWithCode, enrolTotp, TestAuthenticator } from "../../support/mfa";

async function setup(accessToken: string) {
  const response = await postJson("/v1/auth/mfa/totp/setup", {}, bearer(accessToken));
  expect(response.status).toBe(200);
  return (await response.json()) as { setup_token: string; secret: string; otpauth_uri: string };
}

describe("TOTP enrolment", () => {
  it("setup hands out a fresh base32 seed, its otpauth URI and a setup token, and stores nothing", async () => {
    const user = await verifiedUser("totp");
    const first = await setup(user.tokens.access_token);
    const second = await setup(user.tokens.access_token);
    expect(first.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(second.secret).not.toBe(first.secret);
    expect(first.otpauth_uri).toBe(
      `otpauth://totp/relab:${encodeURIComponent(user.email)}?issuer=relab&secret=${first.secret}&algorithm=SHA1&digits=6&period=30`,
    );
    const row = await env.DB.prepare("SELECT totp_secret FROM users WHERE id = ?").bind(user.id).first();
    expect(row).toEqual({ totp_secret: null });
    expect(await (await me(user.tokens.access_token)).json()).toMatchObject({ totp_enabled: false });
  });

  it("confirm needs the password (400 missing, 403 wrong) and a current code of the new seed (403 wrong)", async () => {
    const user = await verifiedUser("totp");
    const { setup_token, secret } = await setup(user.tokens.access_token);
    await awayFromStepEnd();
    const authenticator = TestAuthenticator.fromSecret(secret);
    const confirm = (body: object) => postJson("/v1/auth/mfa/totp/confirm", { setup_token, ...body }, bearer(user.tokens.access_token));
    await expectProblem(await confirm({ code: authenticator.peek() }), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(
      await confirm({ code: authenticator.peek(), current_password: "not-the-password-at-all" }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    await expectProblem(await confirm({ code: authenticator.stale(), current_password: user.password }), 403, "MFA_CODE_INVALID");
    expect(await (await me(user.tokens.access_token)).json()).toMatchObject({ totp_enabled: false });
  });

  it("refuses a setup token made for another account, a tampered one, and one past its 10 minutes", async () => {
    const [ada, bob] = await Promise.all([verifiedUser("totp"), verifiedUser("totp")]);
    const adas = await setup(ada.tokens.access_token);
    await awayFromStepEnd();
    const code = TestAuthenticator.fromSecret(adas.secret).next();
    const confirm = (token: string) =>
      postJson("/v1/auth/mfa/totp/confirm", { setup_token: token, code, current_password: bob.password }, bearer(bob.tokens.access_token));
    await expectProblem(await confirm(adas.setup_token), 400, "TOTP_SETUP_TOKEN_INVALID");
    await expectProblem(await confirm(`${adas.setup_token.slice(0, -2)}AA`), 400, "TOTP_SETUP_TOKEN_INVALID");
    const { setup_token, secret } = await setup(ada.tokens.access_token);
    const later = Date.now() + 11 * 60_000;
    const lateCode = totp(base32Decode(secret), later / 1000);
    const realNow = Date.now;
    Date.now = () => later;
    try {
      const response = await postJson(
        "/v1/auth/mfa/totp/confirm",
        { setup_token, code: lateCode, current_password: ada.password },
        bearer(ada.tokens.access_token),
      );
      // The access token has expired by then too; either way the enrolment does not happen.
      expect([400, 401]).toContain(response.status);
    } finally {
      Date.now = realNow;
    }
    expect(await (await me(ada.tokens.access_token)).json()).toMatchObject({ totp_enabled: false });
  });

  it("turning TOTP on revokes every session and hands the enrolling bearer client a new one with ten recovery codes", async () => {
    const user = await verifiedUser("totp");
    const otherDevice = await bearerLogin(user);
    const enrolment = await enrolTotp(user.tokens.access_token, user.password);
    expect(enrolment.recoveryCodes).toHaveLength(10);
    expect(new Set(enrolment.recoveryCodes).size).toBe(10);
    for (const code of enrolment.recoveryCodes) expect(code).toMatch(/^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/);
    expect((await me(user.tokens.access_token)).status).toBe(401);
    expect((await me(otherDevice.access_token)).status).toBe(401);
    const refreshed = await postJson("/v1/auth/bearer/refresh", { refresh_token: otherDevice.refresh_token });
    await expectProblem(refreshed, 401, "REFRESH_TOKEN_INVALID");
    const mine = await me(enrolment.tokens.access_token);
    expect(await mine.json()).toMatchObject({ id: user.id, totp_enabled: true });
    expect((await postJson("/v1/auth/bearer/refresh", { refresh_token: enrolment.tokens.refresh_token })).status).toBe(200);
  });

  it("a browser enrolling gets new cookies instead of a tokens member", async () => {
    const user = await verifiedUser("totp");
    const login = await postJson("/v1/auth/session/login", { username: user.email, password: user.password });
    expect(login.status).toBe(204);
    const cookie = getSetCookie(login)
      .map((value) => value.split(";")[0])
      .join("; ");
    const setupResponse = await postJson("/v1/auth/mfa/totp/setup", {}, { cookie });
    const { setup_token, secret } = (await setupResponse.json()) as { setup_token: string; secret: string };
    await awayFromStepEnd();
    const confirmed = await postJson(
      "/v1/auth/mfa/totp/confirm",
      { setup_token, code: TestAuthenticator.fromSecret(secret).next(), current_password: user.password },
      { cookie },
    );
    expect(confirmed.status).toBe(200);
    const body = (await confirmed.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["recovery_codes"]);
    const fresh = getSetCookie(confirmed)
      .map((value) => value.split(";")[0])
      .join("; ");
    expect(fresh).toMatch(/__Host-relab-auth=.+; __Host-relab-refresh=.+/);
    expect((await api("/v1/users/me", { headers: { cookie } })).status).toBe(401);
    expect((await api("/v1/users/me", { headers: { cookie: fresh } })).status).toBe(200);
  });

  it("keeps the seed only sealed (AES-256-GCM), never as the base32 secret", async () => {
    const user = await verifiedUser("totp");
    const { setup_token, secret } = await setup(user.tokens.access_token);
    await awayFromStepEnd();
    const confirmed = await postJson(
      "/v1/auth/mfa/totp/confirm",
      { setup_token, code: TestAuthenticator.fromSecret(secret).next(), current_password: user.password },
      bearer(user.tokens.access_token),
    );
    expect(confirmed.status).toBe(200);
    const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] };
    const row = await env.DB.prepare("SELECT totp_secret FROM users WHERE id = ?").bind(user.id).first<{ totp_secret: string }>();
    expect(row!.totp_secret).toMatch(/^v2\.0\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(row!.totp_secret).not.toContain(secret);
    const stored = await env.DB.prepare("SELECT code_hash FROM recovery_codes WHERE user_id = ?")
      .bind(user.id)
      .all<{ code_hash: string }>();
    expect(stored.results).toHaveLength(10);
    for (const { code_hash } of stored.results) {
      expect(code_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(recovery_codes.map((code) => code.replace("-", ""))).not.toContain(code_hash);
    }
  });

  it("setup and confirm answer 409 once TOTP is on", async () => {
    const user = await verifiedUser("totp");
    const enrolment = await enrolTotp(user.tokens.access_token, user.password);
    await expectProblem(await postJson("/v1/auth/mfa/totp/setup", {}, bearer(enrolment.tokens.access_token)), 409, "TOTP_ALREADY_ENABLED");
  });

  it("two concurrent confirmations: exactly one turns TOTP on", async () => {
    const user = await verifiedUser("totp");
    const [a, b] = await Promise.all([setup(user.tokens.access_token), setup(user.tokens.access_token)]);
    const send = (s: { setup_token: string; secret: string }) =>
      postJson(
        "/v1/auth/mfa/totp/confirm",
        { setup_token: s.setup_token, code: TestAuthenticator.fromSecret(s.secret).next(), current_password: user.password },
        bearer(user.tokens.access_token),
      );
    await awayFromStepEnd();
    const statuses = (await Promise.all([send(a), send(b)])).map((r) => r.status).sort();
    // The loser finds TOTP on (409), or its token already revoked by the winner (401).
    expect(statuses[0]).toBe(200);
    expect([401, 409]).toContain(statuses[1]);
    const codes = await env.DB.prepare("SELECT count(*) AS n FROM recovery_codes WHERE user_id = ?").bind(user.id).first();
    expect(codes).toEqual({ n: 10 });
  });
});

describe("turning TOTP off and regenerating recovery codes", () => {
  it("disable needs the password and a code; afterwards login needs no second step", async () => {
    const user = await verifiedUser("totp");
    const { authenticator, tokens } = await enrolTotp(user.tokens.access_token, user.password);
    const disable = (body: object) => postJson("/v1/auth/mfa/totp/disable", body, bearer(tokens.access_token));
    await expectProblem(await disable({ code: authenticator.peek() }), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(await disable({ code: authenticator.stale(), current_password: user.password }), 403, "MFA_CODE_INVALID");
    // A wrong password stops the step-up before the code is looked at: the code stays unused.
    await expectProblem(
      await disable({ code: authenticator.peek(), current_password: "wrong-password-entirely" }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    expect((await disable({ code: authenticator.next(), current_password: user.password })).status).toBe(204);
    expect(await (await me(tokens.access_token)).json()).toMatchObject({ totp_enabled: false });
    const rows = await env.DB.prepare("SELECT totp_secret, totp_last_step FROM users WHERE id = ?").bind(user.id).first();
    expect(rows).toEqual({ totp_secret: null, totp_last_step: null });
    const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
    expect(login.status).toBe(200);
    await expectProblem(await disable({ code: "123456", current_password: user.password }), 409, "TOTP_NOT_ENABLED");
  });

  it("regenerating replaces the recovery codes: the old ones stop working, a new one signs in once", async () => {
    const user = await verifiedUser("totp");
    const { authenticator, recoveryCodes, tokens } = await enrolTotp(user.tokens.access_token, user.password);
    const regenerate = (code: string) => postJson("/v1/auth/mfa/recovery-codes/regenerate", { code }, bearer(tokens.access_token));
    await expectProblem(await regenerate("000000"), 403, "MFA_CODE_INVALID");
    const response = await regenerate(recoveryCodes[0]!);
    expect(response.status).toBe(200);
    const { recovery_codes } = (await response.json()) as { recovery_codes: string[] };
    expect(recovery_codes).toHaveLength(10);
    expect(recovery_codes.some((code) => recoveryCodes.includes(code))).toBe(false);
    const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
    const { mfa_token } = (await login.json()) as { mfa_token: string };
    await expectProblem(await postJson("/v1/auth/mfa/challenge", { mfa_token, code: recoveryCodes[1] }), 401, "MFA_CODE_INVALID");
    expect((await postJson("/v1/auth/mfa/challenge", { mfa_token, code: recovery_codes[0] })).status).toBe(200);
    expect(authenticator.next()).toMatch(/^\d{6}$/);
  });

  it.each([
    ["two recovery codes", (e: { recoveryCodes: string[] }) => [e.recoveryCodes[4]!, e.recoveryCodes[5]!]],
    [
      "an authenticator code and a recovery code",
      (e: { recoveryCodes: string[]; authenticator: TestAuthenticator }) => [e.authenticator.next(), e.recoveryCodes[6]!],
    ],
  ])(
    "two regenerations at once, with %s: one wins, the other is 409, and the winner's codes are the ones that work",
    async (_label, codesOf) => {
      const user = await verifiedUser("totp");
      const enrolment = await enrolTotp(user.tokens.access_token, user.password);
      const regenerate = (code: string) =>
        postJson("/v1/auth/mfa/recovery-codes/regenerate", { code }, bearer(enrolment.tokens.access_token));
      const [a, b] = codesOf(enrolment);

      const responses = await Promise.all([regenerate(a!), regenerate(b!)]);
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = responses.find((r) => r.status === 200)!;
      const loser = responses.find((r) => r.status === 409)!;
      const problem = await expectProblem(loser, 409, "RECOVERY_CODES_CHANGED");
      expect(problem).not.toHaveProperty("recovery_codes");
      // Read the seed and the current generation, then one batch: compare-and-set, spend, replace.
      expect(roundTrips(winner)).toBe(3);
      const { recovery_codes } = (await winner.json()) as { recovery_codes: string[] };

      // Exactly the winner's ten codes are stored; none of the enrolment's survive.
      const stored = await env.DB.prepare("SELECT code_hash FROM recovery_codes WHERE user_id = ?")
        .bind(user.id)
        .all<{ code_hash: string }>();
      const hashes = (codes: string[]) => codes.map((code) => recoveryCodeHash(normalizeRecoveryCode(code)!)).sort();
      expect(stored.results.map((row) => row.code_hash).sort()).toEqual(hashes(recovery_codes));
      // A winner's code signs in; an enrolment code does not.
      expect((await bearerLoginWithCode(user, recovery_codes[9]!)).access_token).toBeTruthy();
      const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
      const { mfa_token } = (await login.json()) as { mfa_token: string };
      await expectProblem(
        await postJson("/v1/auth/mfa/challenge", { mfa_token, code: enrolment.recoveryCodes[0] }),
        401,
        "MFA_CODE_INVALID",
      );
    },
  );

  it("a regeneration after another one finished is not a conflict", async () => {
    const user = await verifiedUser("totp");
    const enrolment = await enrolTotp(user.tokens.access_token, user.password);
    const regenerate = (code: string) =>
      postJson("/v1/auth/mfa/recovery-codes/regenerate", { code }, bearer(enrolment.tokens.access_token));
    const first = await regenerate(enrolment.recoveryCodes[0]!);
    expect(first.status).toBe(200);
    const { recovery_codes } = (await first.json()) as { recovery_codes: string[] };
    const second = await regenerate(recovery_codes[0]!);
    expect(second.status).toBe(200);
    const { recovery_codes: latest } = (await second.json()) as { recovery_codes: string[] };
    expect((await bearerLoginWithCode(user, latest[1]!)).access_token).toBeTruthy();
    // A wrong code is still 403 and spends nothing; the codes stay.
    await expectProblem(await regenerate("aaaaa-aaaaa"), 403, "MFA_CODE_INVALID");
    const left = await env.DB.prepare("SELECT count(*) AS n FROM recovery_codes WHERE user_id = ?").bind(user.id).first();
    expect(left).toEqual({ n: 9 });
  });

  it("regenerating with TOTP off is 409, and a recovery code typed in upper case with spaces still counts", async () => {
    const user = await verifiedUser("totp");
    await expectProblem(
      await postJson("/v1/auth/mfa/recovery-codes/regenerate", { code: "123456" }, bearer(user.tokens.access_token)),
      409,
      "TOTP_NOT_ENABLED",
    );
    const { recoveryCodes } = await enrolTotp(user.tokens.access_token, user.password);
    const typed = recoveryCodes[2]!.toUpperCase().replace("-", " ");
    expect((await bearerLoginWithCode(user, typed)).access_token).toBeTruthy();
  });
});
