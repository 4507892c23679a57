import { describe, expect, it } from "vitest";
import { bearer, postJson, registerUser, verifiedUser } from "../support/accounts";
import { api, limiterCalls, roundTrips } from "../support/http";
import { fireTogether, freshIp, limitedApi, remaining, statusCounts } from "../support/limits";

// In production every counter-store call is a network hop to a Durable Object: the limiter's
// cost is counted per request like D1 round trips, never timed.
describe("counter-store calls per request", () => {
  it("costs an anonymous read one call and no D1 round trip of its own", async () => {
    // An uncached read (the product list), so both requests reach D1 alike.
    const limited = await limitedApi(freshIp(), "/v1/products");
    const unlimited = await api("/v1/products", { headers: { "cf-connecting-ip": freshIp() } });
    expect(limiterCalls(limited)).toBe(1);
    expect(limiterCalls(unlimited)).toBe(0);
    expect(roundTrips(limited)).toBe(roundTrips(unlimited));
  });

  it("costs a signed-in read one call, and the token check no extra D1 round trip", async () => {
    const user = await verifiedUser("calls");
    const response = await limitedApi(freshIp(), "/v1/users/me", { headers: bearer(user.tokens.access_token) });
    expect(response.status).toBe(200);
    expect(limiterCalls(response)).toBe(1);
    expect(roundTrips(response)).toBe(roundTrips(await api("/v1/users/me", { headers: bearer(user.tokens.access_token) })));
  });

  it("costs a login one call for the IP limits and one for the account's budget, plus its refund on success", async () => {
    const user = await registerUser();
    const ip = freshIp();
    const login = (password: string) =>
      limitedApi(ip, "/v1/auth/bearer/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: user.email, password }),
      });
    const failed = await login("not-the-password-at-all");
    expect(failed.status).toBe(400);
    expect(limiterCalls(failed)).toBe(2);
    const succeeded = await login(user.password);
    expect(succeeded.status).toBe(200);
    expect(limiterCalls(succeeded)).toBe(3);
    // With the request limits off only the budget remains.
    const budgetOnly = await postJson("/v1/auth/bearer/login", { username: user.email, password: "not-the-password-at-all" });
    expect(limiterCalls(budgetOnly)).toBe(1);
  });

  it("counts a returning client's reads with units taken ahead: far fewer calls, the same count down, the same limit", async () => {
    const ip = freshIp();
    const left: number[] = [];
    const calls: number[] = [];
    for (let i = 0; i < 301; i++) {
      const response = await limitedApi(ip, "/v1/units");
      calls.push(limiterCalls(response));
      if (i < 300) {
        expect(response.status).toBe(200);
        left.push(remaining(response, "read-ip"));
      } else {
        expect(response.status).toBe(429);
      }
    }
    expect(left).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
    // One unit, then 2, 4, 8 and 15 at a time (src/rate-limits/leases.ts); the refused read asks once more.
    expect(calls.slice(0, 8)).toEqual([1, 1, 0, 1, 0, 0, 0, 1]);
    expect(calls.reduce((sum, n) => sum + n, 0)).toBe(24);
  }, 60_000);

  it("counts logins, and other limits that fail closed, one call per request", async () => {
    const ip = freshIp();
    for (let i = 0; i < 4; i++) {
      const response = await limitedApi(ip, "/v1/auth/bearer/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: `nobody.${i}@example.org`, password: "not-the-password-at-all" }),
      });
      expect(response.status).toBe(400);
      expect(limiterCalls(response)).toBe(2);
    }
  });

  it("answers a client whose bucket is spent without calling the store again", async () => {
    const ip = freshIp();
    const responses = await fireTogether(301, () => limitedApi(ip, "/v1/units"));
    expect(statusCounts(responses)).toEqual({ 200: 300, 429: 1 });
    const again = await limitedApi(ip, "/v1/units");
    expect(again.status).toBe(429);
    expect(limiterCalls(again)).toBe(0);
  }, 60_000);
});
