import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ACCESS_COOKIE } from "../../src/auth/cookies";
import { signAccessToken } from "../../src/auth/tokens";
import { bearer, registerUser, verifiedUser } from "../support/accounts";
import {
  EXPORT,
  expectRefused,
  fireTogether,
  freshIp,
  limitedApi,
  READ,
  readings,
  remaining,
  statusCounts,
  theRefused,
  UPLOAD,
  validateEmail,
} from "../support/limits";

// The request-rate limiters of /v1 (src/middleware/rate-limit.ts) for signed-in callers: per-user
// buckets, tokens that select no user, and signed-in exports (a user and an IP subject at once).
// Anonymous buckets are in rate-limit.test.ts.

const SLOW = { timeout: 60_000 };

/**
 * `count` requests in concurrent batches of about `size` (the remainder joins the last batch, so
 * the batch that crosses the limit is a concurrent one). Bodies of answered requests are dropped
 * to keep memory flat; 429s are kept whole.
 */
async function fireInBatches(count: number, size: number, send: (index: number) => Promise<Response>): Promise<Response[]> {
  const batches = Math.max(1, Math.floor(count / size));
  const all: Response[] = [];
  for (let batch = 0; batch < batches; batch++) {
    const start = batch * size;
    const end = batch === batches - 1 ? count : start + size;
    const responses = await fireTogether(end - start, (index) => send(start + index));
    for (const response of responses) if (response.status !== 429) await response.body?.cancel();
    all.push(...responses);
  }
  return all;
}

/** An access token of `userId` signed with `secret`, expiring at `expiresAt` (seconds). */
function accessToken(userId: number, secret: string, expiresAt: number): Promise<string> {
  return signAccessToken(secret, { userId, sessionId: "rate-limit-test", issuedAtMs: Date.now() - 60_000, expiresAt });
}

const inAMinute = () => Math.floor(Date.now() / 1000) + 60;

describe("signed-in callers: per-user buckets, whatever the IP", () => {
  it("is not held by a spent IP bucket: GET /v1/users/me answers 200 from the per-user read bucket", SLOW, async () => {
    const user = await verifiedUser("rl");
    const ip = freshIp();
    const reads = await fireTogether(301, () => limitedApi(ip, READ));
    expect(statusCounts(reads)).toEqual({ 200: 300, 429: 1 });

    const response = await limitedApi(ip, "/v1/users/me", { headers: bearer(user.tokens.access_token) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: number }).id).toBe(user.id);
    expect(response.headers.get("ratelimit-policy")).toBe('"read-user";q=1500;w=60');
    expect(response.headers.get("ratelimit")).toMatch(/^"read-user";r=1499;t=\d+$/);

    // The anonymous client on that IP is still refused.
    await expectRefused(await limitedApi(ip, READ), "read-ip", 300);
  });

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

  it("read-user: lets exactly 1500 of 1501 reads through, from two IPs drawing on one counter", SLOW, async () => {
    const user = await verifiedUser("rl");
    const ips = [freshIp(), freshIp()];
    const auth = bearer(user.tokens.access_token);
    const responses = await fireInBatches(1501, 250, (index) => limitedApi(ips[index % 2]!, READ, { headers: auth }));
    expect(statusCounts(responses)).toEqual({ 200: 1500, 429: 1 });
    await expectRefused(theRefused(responses), "read-user", 1500);
    // The IPs' anonymous buckets are full, so the refusal was the user's.
    expect(remaining(await limitedApi(ips[0]!, READ), "read-ip")).toBe(299);
  });

  it("write-user: lets exactly 600 of 601 writes through", SLOW, async () => {
    const user = await verifiedUser("rl");
    const ip = freshIp();
    const auth = bearer(user.tokens.access_token);
    const responses = await fireInBatches(601, 300, () => validateEmail(ip, auth));
    expect(statusCounts(responses)).toEqual({ 200: 600, 429: 1 });
    expect(responses.find((r) => r.status === 200)!.headers.get("ratelimit-policy")).toBe('"write-user";q=600;w=60');
    await expectRefused(theRefused(responses), "write-user", 600);
  });

  it("upload-user: lets exactly 300 of 301 uploads through", SLOW, async () => {
    const user = await verifiedUser("rl");
    const ip = freshIp();
    const auth = bearer(user.tokens.access_token);
    const responses = await fireTogether(301, () => limitedApi(ip, UPLOAD, { method: "POST", headers: auth }));
    expect(statusCounts(responses)).toEqual({ 404: 300, 429: 1 });
    expect(responses.find((r) => r.status === 404)!.headers.get("ratelimit-policy")).toBe('"upload-user";q=300;w=60');
    await expectRefused(theRefused(responses), "upload-user", 300);
  });
});

describe("tokens that select no user: counted in the IP bucket", () => {
  it("honours a live, correctly signed token without a database read (the control for the cases below)", async () => {
    const user = await registerUser();
    const response = await limitedApi(freshIp(), READ, { headers: bearer(await accessToken(user.id, env.AUTH_TOKEN_SECRET, inAMinute())) });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"read-user";q=1500;w=60');
  });

  const cases: Array<[string, (userId: number) => Promise<string>]> = [
    ["a forged token (Bearer garbage)", async () => "garbage"],
    ["a token signed with another secret", (userId) => accessToken(userId, "not-the-test-secret-0123456789abcdef01234567", inAMinute())],
    ["an expired token of a real user", (userId) => accessToken(userId, env.AUTH_TOKEN_SECRET, Math.floor(Date.now() / 1000) - 1)],
  ];

  it.each(cases)("counts %s in read-ip, and refuses it once the IP bucket is spent", SLOW, async (_, token) => {
    const user = await registerUser();
    const ip = freshIp();
    const auth = bearer(await token(user.id));
    const first = await limitedApi(ip, READ, { headers: auth });
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
    expect(remaining(first, "read-ip")).toBe(299);

    const rest = await fireTogether(300, () => limitedApi(ip, READ, { headers: auth }));
    expect(statusCounts(rest)).toEqual({ 200: 299, 429: 1 });
    await expectRefused(theRefused(rest), "read-ip", 300);
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

  it("shares the 90 ceiling between users on one IP, while an anonymous client there keeps its own 30", SLOW, async () => {
    const [alice, bob] = [await verifiedUser("rl"), await verifiedUser("rl")];
    const ip = freshIp();
    const first = await fireTogether(60, () => limitedApi(ip, EXPORT, { headers: bearer(alice.tokens.access_token) }));
    expect(statusCounts(first)).toEqual({ 404: 60 });

    const second = await fireTogether(31, () => limitedApi(ip, EXPORT, { headers: bearer(bob.tokens.access_token) }));
    expect(statusCounts(second)).toEqual({ 404: 30, 429: 1 });
    await expectRefused(theRefused(second), "export-signed-in-ip", 90);

    const anonymous = await fireTogether(31, () => limitedApi(ip, EXPORT));
    expect(statusCounts(anonymous)).toEqual({ 404: 30, 429: 1 });
    expect(anonymous.find((r) => r.status === 404)!.headers.get("ratelimit-policy")).toBe('"export-ip";q=30;w=60');
    await expectRefused(theRefused(anonymous), "export-ip", 30);
  });
});
