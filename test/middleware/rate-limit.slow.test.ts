import { describe, expect, it } from "vitest";
import { api, apiWithVars } from "../support/http";
import {
  expectRefused,
  fireTogether,
  freshIp,
  freshV6Prefix,
  limitedApi,
  READ,
  remaining,
  statusCounts,
  theRefused,
  validateEmail,
} from "../support/limits";

// The slow tier (npm run test:slow) of rate-limit.test.ts: bursts of hundreds of requests at an
// anonymous bucket's boundary. Every test takes its own client address.

const SLOW = { timeout: 60_000 };

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
});

describe("anonymous writes: write-ip, 120 per minute per client IP", () => {
  it("write-ip: lets exactly 120 of 121 simultaneous writes through", SLOW, async () => {
    const ip = freshIp();
    const responses = await fireTogether(121, () => validateEmail(ip));
    expect(statusCounts(responses)).toEqual({ 200: 120, 429: 1 });
    expect(responses.find((r) => r.status === 200)!.headers.get("ratelimit-policy")).toBe('"write-ip";q=120;w=60');
    await expectRefused(theRefused(responses), "write-ip", 120);
  });
});

describe("client addresses: IPv6 counts by /64, IPv4-mapped IPv6 as the IPv4 address", () => {
  it("lets exactly 300 of 301 reads through when they come from many addresses of one /64", SLOW, async () => {
    const prefix = freshV6Prefix();
    const responses = await fireTogether(301, (index) => limitedApi(`${prefix}:${(index + 1).toString(16)}::1`, READ));
    expect(statusCounts(responses)).toEqual({ 200: 300, 429: 1 });
    await expectRefused(theRefused(responses), "read-ip", 300);
  });
});

describe("refused routing counts too: the limiter runs before routing", () => {
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
    // overrides), then a few through the deployed entry point (`api`).
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
