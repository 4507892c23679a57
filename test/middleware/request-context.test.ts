import { afterEach, describe, expect, it } from "vitest";
import { api, apiWithVars, PRODUCTION_VARS, roundTrips } from "../support/http";
import { captureLogs } from "../support/logs";

describe("X-Request-ID", () => {
  it("echoes a well-formed incoming id", async () => {
    const response = await api("/v1/units", { headers: { "X-Request-ID": "client-run-42.step:7" } });
    expect(response.headers.get("x-request-id")).toBe("client-run-42.step:7");
  });

  it.each([
    ["too long", "a".repeat(129)],
    ["with spaces", "two words"],
    ["with a newline-like escape", "abc%0d%0aSet-Cookie"],
    ["starting with punctuation", "-abc"],
    ["with an equals sign", "run=42"],
  ])("replaces an id that is %s with a generated UUID", async (_, incoming) => {
    const response = await api("/v1/units", { headers: { "X-Request-ID": incoming } });
    const id = response.headers.get("x-request-id");
    expect(id).not.toBe(incoming);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("generates a different id for each request without one", async () => {
    const [a, b] = await Promise.all([api("/live"), api("/live")]);
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
  });

  it("is on error responses too, and matches the problem body", async () => {
    const response = await api("/v1/nothing-here", { headers: { "X-Request-ID": "err-1" } });
    expect(response.headers.get("x-request-id")).toBe("err-1");
    expect(await response.json()).toMatchObject({ request_id: "err-1" });
  });
});

describe("request logging", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("writes JSON lines that all carry the request id, with the client IP from CF-Connecting-IP", async () => {
    await api("/live"); // the bootstrap run happens here, not in the request under test
    logs = captureLogs();
    await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Request-ID": "log-check-1", "CF-Connecting-IP": "203.0.113.9" },
      body: JSON.stringify({ to: "reader@example.org", subject: "Hello", text: "Body" }),
    });
    const entries = logs.entries();
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(entries.length).toBe(logs.lines.length);
    for (const entry of entries) expect(entry.request_id).toBe("log-check-1");
    expect(entries.map((entry) => entry.msg)).toContain("email kept in the development outbox");
    expect(entries.at(-1)).toMatchObject({
      level: "info",
      msg: "request",
      method: "POST",
      path: "/__dev/outbox",
      status: 204,
      d1_round_trips: 0,
      limiter_calls: 0,
      lane: "app",
      client_ip: "203.0.113.9",
    });
  });

  it("ignores X-Forwarded-For for the client IP", async () => {
    logs = captureLogs();
    await api("/live", { headers: { "X-Forwarded-For": "198.51.100.1" } });
    expect(logs.entries().at(-1)).toMatchObject({ client_ip: null });
  });
});

describe("Server-Timing", () => {
  it("reports the request's D1 round trips in development", async () => {
    expect(roundTrips(await api("/live"))).toBe(0);
    // The product list: one batch (page and count). Units would come from the KV cache.
    expect(roundTrips(await api("/v1/products"))).toBe(1);
  });

  it("is absent in production", async () => {
    const response = await apiWithVars(PRODUCTION_VARS, "/v1/units");
    expect(response.status).toBe(200);
    expect(response.headers.get("server-timing")).toBeNull();
  });
});
