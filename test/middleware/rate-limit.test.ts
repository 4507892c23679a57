import { describe, expect, it } from "vitest";
import { api, expectProblem, ORIGIN } from "../support/http";
import {
  EXPORT,
  expectRefused,
  fireTogether,
  freshIp,
  freshV6Prefix,
  limitedApi,
  READ,
  readings,
  remaining,
  statusCounts,
  theRefused,
  UPLOAD,
  validateEmail,
} from "../support/limits";

// The request-rate limiters of /v1 (src/rate-limits/middleware.ts), through the HTTP surface with
// the real counter store: anonymous buckets, client addresses, routing, the switch and CORS.
// Signed-in buckets are in rate-limit-users.test.ts; the bursts of hundreds of requests at a bucket's
// boundary in rate-limit.slow.test.ts. Every test takes its own client address, so each starts with
// full buckets.

describe("anonymous reads: read-ip, 300 per minute per client IP", () => {
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

    const del = await limitedApi(ip, "/v1/units", { method: "DELETE" });
    await expectProblem(del, 405, "METHOD_NOT_ALLOWED");
    expect(del.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    expect(remaining(del, "write-ip")).toBe(118);

    const post = await validateEmail(ip);
    expect(post.status).toBe(200);
    expect(remaining(post, "write-ip")).toBe(117);
  });

  it("upload-ip: lets exactly 30 of 31 simultaneous uploads through (anonymous, so each passed one is then 401)", async () => {
    const ip = freshIp();
    const responses = await fireTogether(31, () => limitedApi(ip, UPLOAD, { method: "POST" }));
    expect(statusCounts(responses)).toEqual({ 401: 30, 429: 1 });
    expect(responses.find((r) => r.status === 401)!.headers.get("ratelimit-policy")).toBe('"upload-ip";q=30;w=60');
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
    expect(statusCounts(uploads)).toEqual({ 401: 30, 429: 1 });

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
});

describe("with RATE_LIMITS_ENABLED=false (the suites' default)", () => {
  it("sends no RateLimit headers", async () => {
    const headers = { "cf-connecting-ip": freshIp() };
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
    expect(statusCounts(uploads)).toEqual({ 401: 30, 429: 1 });
    for (const response of [uploads.find((r) => r.status === 401)!, theRefused(uploads)]) {
      expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(exposed(response)).toEqual(expect.arrayContaining(["ratelimit", "ratelimit-policy", "retry-after"]));
    }
    await expectRefused(theRefused(uploads), "upload-ip", 30);
  });
});
