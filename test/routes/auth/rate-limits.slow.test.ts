import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { canonicalEmail } from "../../../src/lib/email-address";
import { subjects } from "../../../src/rate-limits/client";
import { registerUser } from "../../support/accounts";
import { expectProblem } from "../../support/http";
import { expectRateLimited, fireTogether, freshIp, GENERAL_WRITE, limitedPost, statusCounts, unknownEmail } from "../../support/limits";

// The slow tier (npm run test:slow) of rate-limits.test.ts: login-ip at its boundary, with bursts
// of 60 logins.

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

// Bursts of 60 logins and the object warm-ups take seconds.
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
