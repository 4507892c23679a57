import { afterEach, describe, expect, it } from "vitest";
import { verifiedUser } from "../support/accounts";
import { api, apiWithVars, d1Cost, PRODUCTION_VARS, roundTrips, rowsRead } from "../support/http";
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
      d1_statements: 0,
      d1_rows_read: 0,
      d1_rows_written: 0,
      d1_duration_ms: 0,
      d1_longest_ms: 0,
      limiter_calls: 0,
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

  it("reports the rows read and written and the database time, summed over the request's statements", async () => {
    const empty = await api("/v1/products?size=5");
    expect(roundTrips(empty)).toBe(1);
    const before = rowsRead(empty);
    const user = await verifiedUser("timing");
    const created = await api("/v1/products", {
      method: "POST",
      headers: { Authorization: `Bearer ${user.tokens.access_token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Metered kettle" }),
    });
    expect(created.status).toBe(201);
    const write = d1Cost(created);
    expect(write.rowsWritten).toBeGreaterThan(0);
    expect(write.unmetered).toBe(0);
    expect(write.durationMs).toBeGreaterThanOrEqual(0);
    // One more base product: the page and its count read more rows than before, and write none.
    const after = await api("/v1/products?size=5&name[ilike]=metered");
    expect(d1Cost(after)).toMatchObject({ rowsWritten: 0, unmetered: 0 });
    expect(rowsRead(after)).toBeGreaterThan(before);
  });

  it("carries the same numbers in the access log line", async () => {
    await api("/v1/products");
    const logs = captureLogs();
    try {
      const response = await api("/v1/products?size=3");
      const line = logs.entries().at(-1);
      const cost = d1Cost(response);
      expect(line).toMatchObject({ msg: "request", d1_round_trips: 1, d1_rows_read: cost.rowsRead, d1_rows_written: 0 });
      expect(line?.d1_duration_ms).toBeCloseTo(cost.durationMs, 2);
    } finally {
      logs.restore();
    }
  });

  it("is absent in production", async () => {
    const response = await apiWithVars(PRODUCTION_VARS, "/v1/units");
    expect(response.status).toBe(200);
    expect(response.headers.get("server-timing")).toBeNull();
  });
});
