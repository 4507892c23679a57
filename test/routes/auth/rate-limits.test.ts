import { describe, expect, it } from "vitest";
import { newIdentity, postJson, registerUser } from "../../support/accounts";
import { expectProblem } from "../../support/http";
import { expectRateLimited, freshIp, GENERAL_WRITE, limitedPost, unknownEmail } from "../../support/limits";

// The per-IP limits of the auth routes and the reset-mail limit per mailbox. The failure budgets
// (failed logins, wrong secrets at the step-up) are in failure-budgets.test.ts; login-ip's bursts of
// 60 logins in rate-limits.slow.test.ts.

// The reset routes' padded answers (300 ms each) take seconds.
const SLOW = { timeout: 30_000 };

describe("login-ip: 60 logins per minute per IP", () => {
  it("counts bearer and session logins in one bucket beside the general write bucket, one unit each", async () => {
    const ip = freshIp();
    const policy = `${GENERAL_WRITE}, "login-ip";q=60;w=60`;
    for (const [path, left] of [
      ["/v1/auth/bearer/login", 59],
      ["/v1/auth/session/login", 58],
    ] as const) {
      const response = await limitedPost(ip, path, { username: unknownEmail(), password: "not-the-password-at-all" });
      await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
      expect(response.headers.get("ratelimit-policy")).toBe(policy);
      expect(response.headers.get("ratelimit")).toMatch(new RegExp(`^"write-ip";r=\\d+;t=\\d+, "login-ip";r=${left};t=\\d+$`));
    }
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
    for (let i = 0; i < 3; i++)
      expect((await limitedPost(other, "/v1/auth/request-verify-token", { email: unknownEmail() })).status).toBe(202);
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
