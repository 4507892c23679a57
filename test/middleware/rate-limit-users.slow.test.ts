import { describe, expect, it } from "vitest";
import { bearer, registerUser, verifiedUser } from "../support/accounts";
import {
  EXPORT,
  expectRefused,
  fireTogether,
  freshIp,
  limitedApi,
  READ,
  remaining,
  statusCounts,
  TOKENS_OF_NO_USER,
  theRefused,
  UPLOAD,
  validateEmail,
} from "../support/limits";

// The slow tier (npm run test:slow) of rate-limit-users.test.ts: bursts of hundreds of requests
// at a bucket's boundary.

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
  it.each(TOKENS_OF_NO_USER)("refuses %s once the IP bucket is spent", SLOW, async (_, token) => {
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
