import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { COMMON_PASSWORDS } from "../../../src/data/common-passwords";
import { listOutbox } from "../../../src/services/platform/dev-outbox";
import { bearerLogin, lastEmail, linkToken, me, newIdentity, postJson, registerUser, verifiedUserOverHttp } from "../../support/accounts";
import { PWNED } from "../../support/fake-upstream-config";
import { expectProblem } from "../../support/http";

const register = (body: unknown) => postJson("/v1/auth/register", body);
const longCommon = COMMON_PASSWORDS.split("\n").find((entry) => entry.length >= 12)!;

async function expectPasswordRefused(body: unknown, message: RegExp) {
  const problem = await expectProblem(await register(body), 422, "PASSWORD_REJECTED");
  expect(problem.errors).toEqual([{ pointer: "/password", detail: expect.stringMatching(message) }]);
}

describe("registration", () => {
  it("creates an unverified contributor and emails a verification link in the URL fragment", async () => {
    const identity = newIdentity();
    const response = await register({ ...identity, email: identity.email.toUpperCase() });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { id: number };
    expect(body).toEqual({ id: expect.any(Number), email: identity.email, username: identity.username });

    const mail = await lastEmail(identity.email, "Confirm your email");
    expect(mail.text).toMatch(/^http:\/\/localhost:8081\/verify#token=[\w.-]+$/m);
    const account = (await (await me((await bearerLogin(identity)).access_token)).json()) as Record<string, unknown>;
    expect(account).toMatchObject({ is_verified: false, is_superuser: false, role: "contributor", is_active: true });
  });

  it("refuses an email taken case-insensitively or as another alias of the same mailbox", async () => {
    const gmail = newIdentity();
    const base = gmail.email.split("@")[0]!.replaceAll(".", "");
    await registerUser({ ...gmail, email: `${base}@gmail.com` });
    const aliases = [`${base.toUpperCase()}@GMAIL.COM`, `${base.slice(0, 3)}.${base.slice(3)}@gmail.com`, `${base}+news@googlemail.com`];
    for (const email of aliases) {
      await expectProblem(await register({ ...newIdentity(), email }), 409, "EMAIL_ALREADY_REGISTERED");
    }
  });

  it("refuses a taken username with 409", async () => {
    const first = await registerUser();
    await expectProblem(await register({ ...newIdentity(), username: first.username }), 409, "USERNAME_TAKEN");
  });

  it.each([
    ["a", /2 to 50/],
    ["x".repeat(51), /./],
    ["Upper", /lower-case/],
    ["with-dash", /lower-case/],
    ["admin", /reserved/],
    ["me", /reserved/],
  ])("refuses the username %j with 422", async (username, message) => {
    const response = await register({ ...newIdentity(), username });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { errors?: { pointer: string; detail: string }[] };
    expect(problem.errors?.[0]).toMatchObject({ pointer: "/username", detail: expect.stringMatching(message) });
  });

  it("applies the password rules with a 422 at /password naming the rule", async () => {
    const identity = newIdentity();
    await expectPasswordRefused({ ...identity, password: "short-pass1" }, /at least 12/);
    await expectPasswordRefused({ ...identity, password: "p".repeat(129) }, /at most 128/);
    await expectPasswordRefused({ ...identity, password: `xx-${identity.username.toUpperCase()}-yy` }, /username/);
    await expectPasswordRefused({ ...identity, password: `xx-${identity.email.split("@")[0]}-yy` }, /email/);
    await expectPasswordRefused({ ...identity, password: longCommon }, /too common/);
    await expectPasswordRefused({ ...identity, password: PWNED.breached }, /breach/);
  });

  // The list holds the corpus's passwords that pass the length rule (docs/data-lists.md), so
  // these are refused even when the breach check cannot answer.
  it.each(["password1234", "123456789012", "qwertyuiop123", "Password1234", "QWERTY123456", "1q2w3e4r5t6y"])(
    "refuses the common password %j with 422 at /password",
    async (password) => {
      await expectPasswordRefused({ ...newIdentity(), password }, /too common/);
    },
  );

  it("registers when the breach service is down or too slow (the check fails open)", async () => {
    await registerUser({ ...newIdentity(), password: PWNED.down });
    await registerUser({ ...newIdentity(), password: PWNED.slow });
  });

  it("refuses disposable-email domains with 400", async () => {
    await expectProblem(await register({ ...newIdentity(), email: "someone@mailinator.com" }), 400, "DISPOSABLE_EMAIL");
  });

  it.each([{ role: "lab" }, { is_superuser: true }, { is_verified: true }, { is_active: false }, { id: 1 }, { nickname: "x" }])(
    "refuses the extra member %j with 422",
    async (extra) => {
      const problem = await expectProblem(await register({ ...newIdentity(), ...extra }), 422, "VALIDATION_FAILED");
      expect(problem.errors?.map((e) => e.pointer)).toEqual([`/${Object.keys(extra)[0]}`]);
    },
  );

  it("re-sends a verification link on request, answering every address alike", async () => {
    const user = await registerUser();
    const before = (await listOutbox(env.KV, user.email)).length;
    const known = await postJson("/v1/auth/request-verify-token", { email: user.email });
    const unknown = await postJson("/v1/auth/request-verify-token", { email: "nobody.at.all@example.org" });
    expect(known.status).toBe(202);
    expect(await known.text()).toBe(await unknown.text());
    // The link is sent after the response.
    await expect.poll(async () => (await listOutbox(env.KV, user.email)).length).toBe(before + 1);
  });
});

describe("email verification", () => {
  it("verifies with the emailed token, idempotently", async () => {
    const user = await registerUser();
    const token = linkToken(await lastEmail(user.email, "Confirm your email"), "verify");
    const response = await postJson("/v1/auth/verify", { token });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: user.id, email: user.email, username: user.username, is_verified: true });
    expect((await postJson("/v1/auth/verify", { token })).status).toBe(200);
  });

  it("takes a new user the whole sign-up path: register, the emailed link, verify, sign in", async () => {
    // The other suites make their users directly (verifiedUser in test/support/accounts.ts);
    // this is the path those users stand for, over HTTP.
    const user = await verifiedUserOverHttp("signup");
    const account = (await (await me(user.tokens.access_token)).json()) as Record<string, unknown>;
    expect(account).toMatchObject({ id: user.id, email: user.email, username: user.username, is_verified: true, role: "contributor" });
  });

  it.each(["", "garbage", "1.2.abc"])("refuses the malformed token %j", async (token) => {
    const response = await postJson("/v1/auth/verify", { token });
    expect([400, 422]).toContain(response.status);
  });

  it("refuses a tampered token", async () => {
    const user = await registerUser();
    const token = linkToken(await lastEmail(user.email, "Confirm your email"), "verify");
    const [id, expiry, mac] = token.split(".");
    await expectProblem(await postJson("/v1/auth/verify", { token: `${id}.${Number(expiry) + 1}.${mac}` }), 400, "VERIFY_TOKEN_INVALID");
  });
});

describe("POST /v1/auth/validate-email", () => {
  it.each([
    ["ada@example.org", true],
    ["ADA@Example.ORG", true],
    ["temp@mailinator.com", false],
    ["temp@sub.mailinator.com", false],
    ["not-an-address", false],
  ])("%s → is_valid %s", async (email, valid) => {
    const response = await postJson("/v1/auth/validate-email", { email });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { is_valid: boolean; reason: string | null };
    expect(body.is_valid).toBe(valid);
    expect(body.reason === null).toBe(valid);
  });
});
