import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ACCESS_COOKIE } from "../../src/auth/cookies";
import { signAccessToken } from "../../src/auth/tokens";
import { bearer, registerUser, verifiedUser } from "../support/accounts";
import { api, apiWithVars, expectProblem, ORIGIN } from "../support/http";
import { fireTogether, freshIp, limitedApi, statusCounts } from "../support/limits";

// The request-rate limiters of /v1 (src/middleware/rate-limit.ts), through the HTTP surface with
// the real counter store. Every test takes its own client address, so each starts with full buckets.

const SLOW = { timeout: 60_000 };

const READ = "/v1/units";
const WRITE = "/v1/auth/validate-email";
const UPLOAD = "/v1/products/1/images";
const EXPORT = "/v1/products/export";

interface Reading {
  r: number;
  t: number;
}

/** The `RateLimit` header of a response, by policy name. */
function readings(response: Response): Record<string, Reading> {
  const header = response.headers.get("ratelimit");
  if (header === null) throw new Error(`no RateLimit header (status ${response.status})`);
  const result: Record<string, Reading> = {};
  for (const item of header.split(", ")) {
    const match = /^"([a-z-]+)";r=(\d+);t=(\d+)$/.exec(item);
    if (!match) throw new Error(`malformed RateLimit item: ${item}`);
    result[match[1]!] = { r: Number(match[2]), t: Number(match[3]) };
  }
  return result;
}

/** `r=` of one policy in the `RateLimit` header. */
function remaining(response: Response, policy: string): number {
  const reading = readings(response)[policy];
  if (!reading) throw new Error(`no "${policy}" in RateLimit: ${response.headers.get("ratelimit")}`);
  return reading.r;
}

/** Asserts the one refused response of a boundary run: 429 Problem Details, `Retry-After` = `t=`, `r=0`. */
async function expectRefused(response: Response, policy: string, amount: number): Promise<void> {
  await expectProblem(response, 429, "RATE_LIMITED");
  const retryAfter = response.headers.get("retry-after");
  expect(retryAfter).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(response.headers.get("ratelimit-policy")).toBe(`"${policy}";q=${amount};w=60`);
  expect(response.headers.get("ratelimit")).toBe(`"${policy}";r=0;t=${seconds}`);
}

/** The single 429 among `responses`. */
function theRefused(responses: Response[]): Response {
  const refused = responses.filter((response) => response.status === 429);
  expect(refused).toHaveLength(1);
  return refused[0]!;
}

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

function validateEmail(ip: string, headers: Record<string, string> = {}): Promise<Response> {
  return limitedApi(ip, WRITE, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ email: "a@example.org" }),
  });
}

/** An IPv6 /64 prefix (documentation range) no other test uses, as four groups. */
function freshV6Prefix(): string {
  const group = () => Math.floor(Math.random() * 0xffff).toString(16);
  return `2001:db8:${group()}:${group()}`;
}

function accessToken(userId: number, secret: string, expiresAt: number): string {
  return signAccessToken(secret, { userId, sessionId: "rate-limit-test", issuedAtMs: Date.now() - 60_000, expiresAt });
}

const inAMinute = () => Math.floor(Date.now() / 1000) + 60;

describe("anonymous reads: read-ip, 300 per minute per client IP", () => {
  it("lets exactly 300 of 301 simultaneous reads through and refuses the 301st with 429 RATE_LIMITED", SLOW, async () => {
    const ip = freshIp();
    const responses = await fireTogether(301, () => limitedApi(ip, READ));
    expect(statusCounts(responses)).toEqual({ 200: 300, 429: 1 });

    // Each success took its own unit: the remaining counts are 299 down to 0, none twice.
    const left = responses.filter((response) => response.status === 200).map((response) => remaining(response, "read-ip"));
    expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, index) => index));
    for (const response of responses.filter((r) => r.status === 200)) {
      expect(response.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
    }

    await expectRefused(theRefused(responses), "read-ip", 300);
    // A later request within the window is refused too.
    await expectRefused(await limitedApi(ip, READ), "read-ip", 300);
  });

  it("stamps RateLimit and RateLimit-Policy on successful responses, counting down 299, 298, 297", async () => {
    const ip = freshIp();
    for (const expected of [299, 298, 297]) {
      const response = await limitedApi(ip, READ);
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
      expect(response.headers.get("ratelimit")).toMatch(new RegExp(`^"read-ip";r=${expected};t=\\d+$`));
      const { t } = readings(response)["read-ip"]!;
      expect(t).toBeGreaterThanOrEqual(1);
      expect(t).toBeLessThanOrEqual(60);
    }
  });
});

describe("anonymous writes, uploads and exports: their own buckets per client IP", () => {
  it("write-ip: lets exactly 120 of 121 simultaneous writes through", SLOW, async () => {
    const ip = freshIp();
    const responses = await fireTogether(121, () => validateEmail(ip));
    expect(statusCounts(responses)).toEqual({ 200: 120, 429: 1 });
    expect(responses.find((r) => r.status === 200)!.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    await expectRefused(theRefused(responses), "write-ip", 120);
  });

  it("counts PATCH and DELETE as writes, whatever they answer", async () => {
    const ip = freshIp();
    const patch = await limitedApi(ip, "/v1/users/me", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await expectProblem(patch, 401, "AUTHENTICATION_REQUIRED");
    expect(patch.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    expect(remaining(patch, "write-ip")).toBe(119);

    const del = await limitedApi(ip, "/v1/users/me", { method: "DELETE" });
    await expectProblem(del, 405, "METHOD_NOT_ALLOWED");
    expect(del.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    expect(remaining(del, "write-ip")).toBe(118);

    const post = await validateEmail(ip);
    expect(post.status).toBe(200);
    expect(remaining(post, "write-ip")).toBe(117);
  });

  it("upload-ip: lets exactly 30 of 31 simultaneous uploads through (the unbuilt route answers 404 until then)", async () => {
    const ip = freshIp();
    const responses = await fireTogether(31, () => limitedApi(ip, UPLOAD, { method: "POST" }));
    expect(statusCounts(responses)).toEqual({ 404: 30, 429: 1 });
    expect(responses.find((r) => r.status === 404)!.headers.get("ratelimit-policy")).toBe('"upload-ip";q=30;w=60');
    await expectRefused(theRefused(responses), "upload-ip", 30);
  });

  it("export-ip: lets exactly 30 of 31 simultaneous anonymous exports through", async () => {
    const ip = freshIp();
    const responses = await fireTogether(31, () => limitedApi(ip, EXPORT));
    expect(statusCounts(responses)).toEqual({ 404: 30, 429: 1 });
    expect(responses.find((r) => r.status === 404)!.headers.get("ratelimit-policy")).toBe('"export-ip";q=30;w=60');
    await expectRefused(theRefused(responses), "export-ip", 30);
  });

  it("keeps the buckets separate: a spent upload bucket leaves reads, writes and exports untouched", async () => {
    const ip = freshIp();
    const uploads = await fireTogether(31, () => limitedApi(ip, UPLOAD, { method: "POST" }));
    expect(statusCounts(uploads)).toEqual({ 404: 30, 429: 1 });

    const read = await limitedApi(ip, READ);
    expect(read.status).toBe(200);
    expect(read.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
    expect(remaining(read, "read-ip")).toBe(299);

    const write = await validateEmail(ip);
    expect(write.status).toBe(200);
    expect(write.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    expect(remaining(write, "write-ip")).toBe(119);

    const exported = await limitedApi(ip, EXPORT);
    expect(exported.status).toBe(404);
    expect(remaining(exported, "export-ip")).toBe(29);

    await expectRefused(await limitedApi(ip, UPLOAD, { method: "POST" }), "upload-ip", 30);
  });
});

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
    const response = await limitedApi(freshIp(), READ, { headers: bearer(accessToken(user.id, env.AUTH_TOKEN_SECRET, inAMinute())) });
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toBe('"read-user";q=1500;w=60');
  });

  const cases: Array<[string, (userId: number) => string]> = [
    ["a forged token (Bearer garbage)", () => "garbage"],
    ["a token signed with another secret", (userId) => accessToken(userId, "not-the-test-secret-0123456789abcdef01234567", inAMinute())],
    ["an expired token of a real user", (userId) => accessToken(userId, env.AUTH_TOKEN_SECRET, Math.floor(Date.now() / 1000) - 1)],
  ];

  it.each(cases)("counts %s in read-ip, and refuses it once the IP bucket is spent", SLOW, async (_, token) => {
    const user = await registerUser();
    const ip = freshIp();
    const auth = bearer(token(user.id));
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

describe("client addresses: IPv6 counts by /64, IPv4-mapped IPv6 as the IPv4 address", () => {
  it("shares one bucket between addresses of one /64 and keeps another /64 apart", async () => {
    const prefix = freshV6Prefix();
    const read = async (ip: string) => remaining(await limitedApi(ip, READ), "read-ip");
    expect(await read(`${prefix}::1`)).toBe(299);
    expect(await read(`${prefix}:ffff::9`)).toBe(298);
    // The same /64 written out in full and in capitals.
    const [a, b, c, d] = prefix.split(":");
    const full = [a, b, c, d].map((group) => group!.padStart(4, "0").toUpperCase()).join(":");
    expect(await read(`${full}:0000:0000:0000:0042`)).toBe(297);

    const [, , third, fourth] = prefix.split(":");
    const neighbour = `2001:db8:${third}:${(parseInt(fourth!, 16) ^ 1).toString(16)}::1`;
    expect(await read(neighbour)).toBe(299);
  });

  it("lets exactly 300 of 301 reads through when they come from many addresses of one /64", SLOW, async () => {
    const prefix = freshV6Prefix();
    const responses = await fireTogether(301, (index) => limitedApi(`${prefix}:${(index + 1).toString(16)}::1`, READ));
    expect(statusCounts(responses)).toEqual({ 200: 300, 429: 1 });
    await expectRefused(theRefused(responses), "read-ip", 300);
  });

  it("counts ::ffff:198.51.100.7-style addresses as the IPv4 address", async () => {
    const ip = freshIp();
    expect(remaining(await limitedApi(ip, READ), "read-ip")).toBe(299);
    expect(remaining(await limitedApi(`::ffff:${ip}`, READ), "read-ip")).toBe(298);
    const [o1, o2, o3, o4] = ip.split(".").map(Number) as [number, number, number, number];
    const hex = `::ffff:${((o1 << 8) | o2).toString(16)}:${((o3 << 8) | o4).toString(16)}`;
    expect(remaining(await limitedApi(hex, READ), "read-ip")).toBe(297);
  });
});

describe("refused routing counts too: the limiter runs before routing", () => {
  it("counts 404 paths and 405 methods in the IP buckets", async () => {
    const ip = freshIp();
    const missing = await limitedApi(ip, "/v1/no-such-resource");
    await expectProblem(missing, 404, "NOT_FOUND");
    expect(missing.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
    expect(remaining(missing, "read-ip")).toBe(299);

    const wrongMethod = await limitedApi(ip, READ, { method: "DELETE" });
    await expectProblem(wrongMethod, 405, "METHOD_NOT_ALLOWED");
    expect(wrongMethod.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    expect(remaining(wrongMethod, "write-ip")).toBe(119);

    expect(remaining(await limitedApi(ip, READ), "read-ip")).toBe(298);
  });

  it("refuses a real read once 404s have spent the bucket", SLOW, async () => {
    const ip = freshIp();
    const missing = await fireTogether(300, () => limitedApi(ip, "/v1/no-such-resource"));
    expect(statusCounts(missing)).toEqual({ 404: 300 });
    await expectRefused(await limitedApi(ip, READ), "read-ip", 300);
  });
});

describe("with RATE_LIMITS_ENABLED=false (the suites' default)", () => {
  it("sends no RateLimit headers and lets 301 simultaneous reads from one IP through", SLOW, async () => {
    const ip = freshIp();
    const headers = { "cf-connecting-ip": ip };
    // 301 through the Worker's fetch handler with the suite's own bindings (`apiWithVars` with no
    // overrides): `api` goes through the pool's `exports.default`, whose per-request cost grows
    // with every request a test file makes (cloudflare/workers-sdk#15446).
    const responses = await fireTogether(301, () => apiWithVars({}, READ, { headers }));
    expect(statusCounts(responses)).toEqual({ 200: 301 });
    for (const response of responses) {
      expect(response.headers.get("ratelimit")).toBeNull();
      expect(response.headers.get("ratelimit-policy")).toBeNull();
    }
    // And through the deployed entry point, from the same client, a few more.
    for (const response of await fireTogether(3, () => api(READ, { headers }))) {
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit")).toBeNull();
      expect(response.headers.get("ratelimit-policy")).toBeNull();
    }
  });
});

describe("CORS", () => {
  const exposed = (response: Response) =>
    (response.headers.get("access-control-expose-headers") ?? "").split(",").map((name) => name.trim().toLowerCase());

  it("exposes RateLimit, RateLimit-Policy and Retry-After to the API's own origin, on answers and refusals", async () => {
    const ip = freshIp();
    const uploads = await fireTogether(31, () => limitedApi(ip, UPLOAD, { method: "POST", headers: { Origin: ORIGIN } }));
    expect(statusCounts(uploads)).toEqual({ 404: 30, 429: 1 });
    for (const response of [uploads.find((r) => r.status === 404)!, theRefused(uploads)]) {
      expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(exposed(response)).toEqual(expect.arrayContaining(["ratelimit", "ratelimit-policy", "retry-after"]));
    }
    await expectRefused(theRefused(uploads), "upload-ip", 30);
  });
});
