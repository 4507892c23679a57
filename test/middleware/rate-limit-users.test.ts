import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ACCESS_COOKIE } from "../../src/auth/cookies";
import { bearer, registerUser, verifiedUser } from "../support/accounts";
import {
  accessToken,
  EXPORT,
  expectRefused,
  fireTogether,
  freshIp,
  inAMinute,
  limitedApi,
  READ,
  readings,
  remaining,
  statusCounts,
  TOKENS_OF_NO_USER,
  theRefused,
} from "../support/limits";

// The request-rate limiters of /v1 (src/rate-limits/middleware.ts) for signed-in callers: per-user
// buckets, tokens that select no user, and signed-in exports (a user and an IP subject at once).
// Anonymous buckets are in rate-limit.test.ts; the bursts of hundreds of requests in
// rate-limit-users.slow.test.ts.

describe("signed-in callers: per-user buckets, whatever the IP", () => {
  it("selects the per-user bucket from the access cookie too", async () => {
    const user = await verifiedUser("rl");
    const response = await limitedApi(freshIp(), "/v1/users/me", {
      headers: { cookie: `${ACCESS_COOKIE}=${user.tokens.access_token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"read-user";q=1500;w=60');
    expect(remaining(response, "read-user")).toBe(1499);
  });

  it("shares one user counter across client IPs", async () => {
    const user = await verifiedUser("rl");
    const [first, second] = [freshIp(), freshIp()];
    const auth = bearer(user.tokens.access_token);
    expect(remaining(await limitedApi(first, READ, { headers: auth }), "read-user")).toBe(1499);
    expect(remaining(await limitedApi(second, READ, { headers: auth }), "read-user")).toBe(1498);
    expect(remaining(await limitedApi(first, "/v1/users/me", { headers: auth }), "read-user")).toBe(1497);
    // Neither IP's own read bucket was touched.
    expect(remaining(await limitedApi(second, READ), "read-ip")).toBe(299);
  });
});

describe("tokens that select no user: counted in the IP bucket", () => {
  it("honours a live, correctly signed token without a database read (the control for the cases below)", async () => {
    const user = await registerUser();
    const response = await limitedApi(freshIp(), READ, { headers: bearer(await accessToken(user.id, env.AUTH_TOKEN_SECRET, inAMinute())) });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"read-user";q=1500;w=60');
  });

  it.each(TOKENS_OF_NO_USER)("counts %s in read-ip", async (_, token) => {
    const user = await registerUser();
    const first = await limitedApi(freshIp(), READ, { headers: bearer(await token(user.id)) });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
    expect(remaining(first, "read-ip")).toBe(299);
  });
});

describe("signed-in exports: the user's read bucket plus a 90-per-minute ceiling per IP", () => {
  it("counts a signed-in export in read-user and export-signed-in-ip, and both show in the headers", async () => {
    const user = await verifiedUser("rl");
    const response = await limitedApi(freshIp(), EXPORT, { headers: bearer(user.tokens.access_token) });
    expect(response.status).toBe(404);
    expect(response.headers.get("ratelimit-policy")).toBe('"export-signed-in-ip";q=90;w=60, "read-user";q=1500;w=60');
    const counted = readings(response);
    expect(Object.keys(counted).sort()).toEqual(["export-signed-in-ip", "read-user"]);
    expect(counted["export-signed-in-ip"]!.r).toBe(89);
    expect(counted["read-user"]!.r).toBe(1499);
  });

  it("refuses the 91st export from one IP although the user's read bucket has room", async () => {
    const user = await verifiedUser("rl");
    const ip = freshIp();
    const auth = bearer(user.tokens.access_token);
    const responses = await fireTogether(91, () => limitedApi(ip, EXPORT, { headers: auth }));
    expect(statusCounts(responses)).toEqual({ 404: 90, 429: 1 });
    await expectRefused(theRefused(responses), "export-signed-in-ip", 90);

    const read = await limitedApi(ip, READ, { headers: auth });
    expect(read.status).toBe(200);
    // 90 counted exports and this read; the refused export gave its unit back.
    expect(remaining(read, "read-user")).toBe(1409);
  });

  it("takes nothing from the user's read bucket for an export the IP ceiling refused", async () => {
    const user = await verifiedUser("rl");
    const ip = freshIp();
    const auth = bearer(user.tokens.access_token);
    const responses = await fireTogether(91, () => limitedApi(ip, EXPORT, { headers: auth }));
    expect(statusCounts(responses)).toEqual({ 404: 90, 429: 1 });
    // 90 counted exports and this read: 1409 left.
    expect(remaining(await limitedApi(ip, READ, { headers: auth }), "read-user")).toBe(1409);
  });
});
