import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { canonicalEmail } from "../../../src/lib/email-address";
import { subjects } from "../../../src/services/rate-limiter";
import { bearerLogin, newIdentity, patchMe, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { expectProblem } from "../../support/http";
import { fireTogether, freshIp, limitedApi, statusCounts } from "../../support/limits";
import { captureLogs } from "../../support/logs";

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** A POST from `ip` with the request-rate limiters on. */
const limitedPost = (ip: string, path: string, body: unknown) => limitedApi(ip, path, json(body));

const login = (username: string, password: string) => postJson("/v1/auth/bearer/login", { username, password });

/** An address no account uses and no other test asks about. */
const unknownEmail = (prefix = "ghost") => newIdentity(prefix).email;

/** Asserts a 429 `RATE_LIMITED` and returns its `Retry-After` in seconds. */
async function expectRateLimited(response: Response, policy: string): Promise<number> {
  await expectProblem(response, 429, "RATE_LIMITED");
  expect(response.headers.get("ratelimit-policy")).toBe(policy);
  const retryAfter = Number(response.headers.get("retry-after"));
  expect(Number.isInteger(retryAfter)).toBe(true);
  return retryAfter;
}

const GENERAL_WRITE = '"write-ip";q=120;w=60';

/**
 * Unknown addresses for a burst of logins, each with its counter object already started. Each
 * login takes a unit of its address's failed-login budget; the local runtime starts new objects
 * one after another (about 25 ms each), so 60 first-time objects at once would outlast the
 * limiter's 1 s time-out and turn into 503s that have nothing to do with the IP limit.
 */
async function warmedUnknownEmails(count: number, prefix: string): Promise<string[]> {
  const emails = Array.from({ length: count }, (_, index) => unknownEmail(`${prefix}${index}`));
  for (const email of emails) {
    const subject = subjects.email(env.AUTH_TOKEN_SECRET, canonicalEmail(email));
    await runInDurableObject(env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject)), () => undefined);
  }
  return emails;
}

// Bursts of 60 logins, object warm-ups and the reset routes' padded answers (300 ms each) take seconds.
const SLOW = { timeout: 30_000 };

describe("login-ip: 60 logins per minute per IP", SLOW, () => {
  it("lets exactly 60 of 61 concurrent logins through, bearer and session login sharing the bucket", async () => {
    const ip = freshIp();
    // Every attempt names a different unknown account, so no per-account budget is involved.
    const emails = await warmedUnknownEmails(61, "login");
    const responses = await fireTogether(61, (index) =>
      limitedPost(ip, index % 2 === 0 ? "/v1/auth/bearer/login" : "/v1/auth/session/login", {
        username: emails[index]!,
        password: "not-the-password-at-all",
      }),
    );
    expect(statusCounts(responses)).toEqual({ 400: 60, 429: 1 });
    for (const response of responses.filter((r) => r.status === 400)) {
      await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
    }
    const refused = responses.find((r) => r.status === 429)!;
    const retryAfter = await expectRateLimited(refused, `${GENERAL_WRITE}, "login-ip";q=60;w=60`);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get("ratelimit")).toMatch(/^"write-ip";r=\d+;t=\d+, "login-ip";r=0;t=\d+$/);

    // Both login routes stay refused for this IP, even with the right password.
    const user = await registerUser();
    for (const path of ["/v1/auth/bearer/login", "/v1/auth/session/login"]) {
      const response = await limitedPost(ip, path, { username: user.email, password: user.password });
      await expectProblem(response, 429, "RATE_LIMITED");
      expect(response.headers.get("ratelimit-policy")).toContain('"login-ip";q=60;w=60');
    }
    // Another IP is not held.
    expect((await limitedPost(freshIp(), "/v1/auth/bearer/login", { username: user.email, password: user.password })).status).toBe(200);
  });

  it("counts session logins against bearer logins sequentially too", async () => {
    const ip = freshIp();
    const emails = await warmedUnknownEmails(60, "session");
    const sessions = await fireTogether(60, (index) =>
      limitedPost(ip, "/v1/auth/session/login", { username: emails[index]!, password: "not-the-password-at-all" }),
    );
    expect(statusCounts(sessions)).toEqual({ 400: 60 });
    const bearer = await limitedPost(ip, "/v1/auth/bearer/login", { username: unknownEmail(), password: "not-the-password-at-all" });
    await expectRateLimited(bearer, `${GENERAL_WRITE}, "login-ip";q=60;w=60`);
  });
});

describe("per-IP limits of the other auth routes", SLOW, () => {
  it("register-ip: the 6th registration from one IP in an hour is 429", async () => {
    const ip = freshIp();
    for (let i = 1; i <= 5; i++) {
      const response = await limitedPost(ip, "/v1/auth/register", newIdentity("reg"));
      expect(response.status, await response.clone().text()).toBe(201);
      expect(response.headers.get("ratelimit-policy")).toBe(`${GENERAL_WRITE}, "register-ip";q=5;w=3600`);
      expect(response.headers.get("ratelimit")).toMatch(new RegExp(`^"write-ip";r=${120 - i};t=\\d+, "register-ip";r=${5 - i};t=\\d+$`));
    }
    const sixth = newIdentity("reg");
    const refused = await limitedPost(ip, "/v1/auth/register", sixth);
    const retryAfter = await expectRateLimited(refused, `${GENERAL_WRITE}, "register-ip";q=5;w=3600`);
    expect(retryAfter).toBeGreaterThan(3540);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.headers.get("ratelimit")).toMatch(/^"write-ip";r=115;t=\d+, "register-ip";r=0;t=\d+$/);
    // The refused identity was not created: another IP can register it.
    expect((await limitedPost(freshIp(), "/v1/auth/register", sixth)).status).toBe(201);
  });

  it("verify-ip and request-verification-ip: 3 per hour each, in separate buckets", async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) {
      await expectProblem(await limitedPost(ip, "/v1/auth/verify", { token: `bad-token-${i}` }), 400, "VERIFY_TOKEN_INVALID");
    }
    const verifyRefused = await limitedPost(ip, "/v1/auth/verify", { token: "bad-token-3" });
    const retryAfter = await expectRateLimited(verifyRefused, `${GENERAL_WRITE}, "verify-ip";q=3;w=3600`);
    expect(retryAfter).toBeGreaterThan(3540);
    expect(retryAfter).toBeLessThanOrEqual(3600);

    // verify-ip is spent; request-verification-ip still has all three.
    const unverified = await registerUser();
    for (let i = 0; i < 3; i++) {
      const response = await limitedPost(ip, "/v1/auth/request-verify-token", { email: i === 0 ? unverified.email : unknownEmail() });
      expect(response.status).toBe(202);
      expect(response.headers.get("ratelimit-policy")).toBe(`${GENERAL_WRITE}, "request-verification-ip";q=3;w=3600`);
    }
    await expectRateLimited(
      await limitedPost(ip, "/v1/auth/request-verify-token", { email: unverified.email }),
      `${GENERAL_WRITE}, "request-verification-ip";q=3;w=3600`,
    );
    // And the other way round, on a fresh IP.
    const other = freshIp();
    for (let i = 0; i < 3; i++) expect((await limitedPost(other, "/v1/auth/request-verify-token", { email: unknownEmail() })).status).toBe(202);
    await expectProblem(await limitedPost(other, "/v1/auth/request-verify-token", { email: unknownEmail() }), 429, "RATE_LIMITED");
    await expectProblem(await limitedPost(other, "/v1/auth/verify", { token: "bad-token" }), 400, "VERIFY_TOKEN_INVALID");
  });

  it("forgot-password-ip: a 4th reset request from one IP is 429, whatever the address", async () => {
    const ip = freshIp();
    const known = await registerUser();
    for (const email of [known.email, unknownEmail(), unknownEmail()]) {
      const response = await limitedPost(ip, "/v1/auth/forgot-password", { email });
      expect(response.status).toBe(202);
    }
    const refused = await limitedPost(ip, "/v1/auth/forgot-password", { email: unknownEmail() });
    const retryAfter = await expectRateLimited(refused, `${GENERAL_WRITE}, "forgot-password-ip";q=3;w=3600`);
    expect(retryAfter).toBeGreaterThan(3540);
    expect(retryAfter).toBeLessThanOrEqual(3600);
  });

  it("reset-password-ip: bad tokens count, the 4th attempt is 429", async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i++) {
      await expectProblem(
        await limitedPost(ip, "/v1/auth/reset-password", { token: `bad-token-${i}`, password: "quiet-meadow-60-lantern" }),
        400,
        "RESET_TOKEN_INVALID",
      );
    }
    const refused = await limitedPost(ip, "/v1/auth/reset-password", { token: "bad-token-3", password: "quiet-meadow-60-lantern" });
    const retryAfter = await expectRateLimited(refused, `${GENERAL_WRITE}, "reset-password-ip";q=3;w=3600`);
    expect(retryAfter).toBeGreaterThan(3540);
    expect(retryAfter).toBeLessThanOrEqual(3600);
  });
});

describe("forgot-password-email: 3 reset mails per mailbox per hour, whatever the IP", SLOW, () => {
  const MAILBOX_POLICY = '"forgot-password-email";q=3;w=3600';

  it("refuses the 4th request for one mailbox from a 4th IP, as a +tag alias or in other case", async () => {
    const user = await registerUser();
    for (let i = 0; i < 3; i++) {
      expect((await limitedPost(freshIp(), "/v1/auth/forgot-password", { email: user.email })).status).toBe(202);
    }
    const [local, domain] = user.email.split("@") as [string, string];
    for (const alias of [`${local}+again@${domain}`, user.email.toUpperCase()]) {
      const refused = await limitedPost(freshIp(), "/v1/auth/forgot-password", { email: alias });
      const retryAfter = await expectRateLimited(refused, MAILBOX_POLICY);
      expect(retryAfter).toBeGreaterThan(3540);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(refused.headers.get("ratelimit")).toMatch(/^"forgot-password-email";r=0;t=\d+$/);
    }
    // Another mailbox is not held.
    expect((await limitedPost(freshIp(), "/v1/auth/forgot-password", { email: unknownEmail() })).status).toBe(202);
  });

  it("stays on with the request-rate limiters off, the same for unknown and known addresses", async () => {
    const known = await registerUser();
    const unknown = unknownEmail("nobody");
    // Gmail: dots and a googlemail.com domain reach the same mailbox.
    const gmail = `${newIdentity("g").username.replaceAll("_", ".")}@gmail.com`;
    const refusals: Array<{ status: number; code: string; policy: string | null }> = [];
    for (const [address, alias] of [
      [known.email, known.email.replace("@", "+x@").toUpperCase()],
      [unknown, unknown.replace("@", "+tag@")],
      [gmail, `${gmail.split("@")[0]!.replaceAll(".", "").toUpperCase()}+y@googlemail.com`],
    ] as const) {
      for (let i = 0; i < 3; i++) expect((await postJson("/v1/auth/forgot-password", { email: address })).status).toBe(202);
      const refused = await postJson("/v1/auth/forgot-password", { email: alias });
      const body = await expectProblem(refused, 429, "RATE_LIMITED");
      refusals.push({ status: refused.status, code: body.code, policy: refused.headers.get("ratelimit-policy") });
      // Still refused for the original spelling.
      await expectProblem(await postJson("/v1/auth/forgot-password", { email: address }), 429, "RATE_LIMITED");
    }
    expect(refusals).toEqual([
      { status: 429, code: "RATE_LIMITED", policy: MAILBOX_POLICY },
      { status: 429, code: "RATE_LIMITED", policy: MAILBOX_POLICY },
      { status: 429, code: "RATE_LIMITED", policy: MAILBOX_POLICY },
    ]);
  });
});

describe("failed-login budget: 3 per minute per account, always on", () => {
  const BUDGET_POLICY = '"failed-login";q=3;w=60';

  async function expectBudgetSpent(response: Response): Promise<void> {
    const retryAfter = await expectRateLimited(response, BUDGET_POLICY);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(response.headers.get("ratelimit")).toMatch(/^"failed-login";r=0;t=\d+$/);
  }

  it("refuses even the right password after 3 wrong ones, from any IP", async () => {
    const user = await registerUser();
    for (let i = 0; i < 3; i++) await expectProblem(await login(user.email, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(user.email, user.password));
    // With the request-rate limiters on and a fresh IP, the account's budget still holds.
    await expectBudgetSpent(await limitedPost(freshIp(), "/v1/auth/bearer/login", { username: user.email, password: user.password }));
    await expectBudgetSpent(await postJson("/v1/auth/session/login", { username: user.email, password: user.password }));
  });

  it("shares one budget between the username, the email and its aliases", async () => {
    const user = await registerUser();
    const [local, domain] = user.email.split("@") as [string, string];
    await expectProblem(await login(user.username, "wrong-password-1"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectProblem(await login(user.email, "wrong-password-2"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectProblem(await login(`${local.toUpperCase()}+alias@${domain}`, "wrong-password-3"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(user.username, user.password));
    await expectBudgetSpent(await login(user.email.toUpperCase(), user.password));
  });

  it("limits an unknown email exactly like a known one", async () => {
    const ghost = unknownEmail("unknown");
    for (let i = 0; i < 3; i++) await expectProblem(await login(ghost, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(ghost, "wrong-password-3"));
    await expectBudgetSpent(await login(ghost.replace("@", "+alias@"), "wrong-password-4"));
  });

  it("does not count successful logins", async () => {
    const user = await registerUser();
    await expectProblem(await login(user.email, "wrong-password-1"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectProblem(await login(user.email, "wrong-password-2"), 400, "LOGIN_BAD_CREDENTIALS");
    expect((await login(user.email, user.password)).status).toBe(200);
    await expectProblem(await login(user.email, "wrong-password-3"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(user.email, "wrong-password-4"));
  });

  it("lets exactly 3 of 10 concurrent wrong attempts be checked", async () => {
    const user = await registerUser();
    const responses = await fireTogether(10, (index) => login(user.email, `wrong-password-${index}`));
    expect(statusCounts(responses)).toEqual({ 400: 3, 429: 7 });
    for (const response of responses) {
      if (response.status === 400) await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
      else await expectBudgetSpent(response);
    }
  });

  it("audits the refusal without the address or the password", async () => {
    const user = await registerUser();
    for (let i = 0; i < 3; i++) await expectProblem(await login(user.email, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    const logs = captureLogs();
    try {
      await expectBudgetSpent(await login(user.email, user.password));
    } finally {
      logs.restore();
    }
    const lines = logs.lines.filter((line) => line.includes('"event":"rate_limit.exceeded"'));
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(JSON.parse(line)).toMatchObject({ msg: "audit", event: "rate_limit.exceeded", limits: "failed-login", subject: "email", user_id: user.id });
    expect(line).not.toContain(user.email);
    expect(line).not.toContain(user.email.split("@")[0]!);
    expect(line).not.toContain(user.password);
  });
});

describe("wrong-secret budget at the step-up", () => {
  const WRONG_SECRET_POLICY = '"wrong-secret-minute";q=3;w=60, "wrong-secret-day";q=100;w=86400';
  const newPassword = "quiet-meadow-61-lantern";

  async function expectSecretBudgetSpent(response: Response, dayUsed: number): Promise<void> {
    const retryAfter = await expectRateLimited(response, WRONG_SECRET_POLICY);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(response.headers.get("ratelimit")).toMatch(
      new RegExp(`^"wrong-secret-minute";r=0;t=\\d+, "wrong-secret-day";r=${100 - dayUsed};t=\\d+$`),
    );
  }

  it("refuses the right current password after 3 wrong ones", async () => {
    const user = await verifiedUser("stepup");
    const token = user.tokens.access_token;
    for (let i = 0; i < 3; i++) {
      await expectProblem(await patchMe(token, { password: newPassword, current_password: "wrong" }), 403, "CURRENT_PASSWORD_INVALID");
    }
    await expectSecretBudgetSpent(await patchMe(token, { password: newPassword, current_password: user.password }), 3);
    // The password was not changed: the old one still signs in.
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  it("does not count a correct step-up", async () => {
    const user = await verifiedUser("stepup");
    const token = user.tokens.access_token;
    // Re-stating the current email runs the step-up without changing anything (no revocation).
    const right = () => patchMe(token, { email: user.email, current_password: user.password });
    const wrong = () => patchMe(token, { email: user.email, current_password: "wrong" });
    expect((await right()).status).toBe(200);
    expect((await right()).status).toBe(200);
    await expectProblem(await wrong(), 403, "CURRENT_PASSWORD_INVALID");
    expect((await right()).status).toBe(200);
    await expectProblem(await wrong(), 403, "CURRENT_PASSWORD_INVALID");
    await expectProblem(await wrong(), 403, "CURRENT_PASSWORD_INVALID");
    await expectSecretBudgetSpent(await right(), 3);
  });

  it("lets a real email change through after a wrong guess, and the budget is per account", async () => {
    const user = await verifiedUser("stepup");
    await expectProblem(
      await patchMe(user.tokens.access_token, { email: `moved.${user.email}`, current_password: "wrong" }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    const moved = await patchMe(user.tokens.access_token, { email: `moved.${user.email}`, current_password: user.password });
    expect(moved.status, await moved.clone().text()).toBe(200);
    // Another account's step-up is untouched by this one's guesses.
    const other = await verifiedUser("stepup");
    for (let i = 0; i < 3; i++) {
      await expectProblem(await patchMe(other.tokens.access_token, { email: other.email, current_password: "wrong" }), 403, "CURRENT_PASSWORD_INVALID");
    }
    const again = await bearerLogin({ email: `moved.${user.email}`, password: user.password });
    expect((await patchMe(again.access_token, { email: `moved.${user.email}`, current_password: user.password })).status).toBe(200);
  });
});
