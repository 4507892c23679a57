import { describe, expect, it } from "vitest";
import { api } from "../../support/http";

describe("probes", () => {
  it("GET /live says the Worker is alive without touching storage", async () => {
    const response = await api("/live");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "alive" });
    expect(response.headers.get("server-timing")).toMatch(
      /^d1;desc="0 round trips", d1-rows;desc="read 0, written 0", d1-time;dur=0, d1-longest;dur=0, limiter;desc="0 calls"$/,
    );
  });

  it("GET /health probes D1, KV and R2", async () => {
    const response = await api("/health");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "healthy", checks: { d1: "ok", kv: "ok", r2: "ok" } });
    expect(response.headers.get("server-timing")).toMatch(
      /^d1;desc="1 round trips", d1-rows;desc="read \d+, written 0", d1-time;dur=[\d.]+, d1-longest;dur=[\d.]+, limiter;desc="0 calls"$/,
    );
  });

  it("are not in the public schema", async () => {
    const schema = (await (await api("/v1/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(schema.paths)).not.toContain("/live");
    expect(Object.keys(schema.paths)).not.toContain("/health");
  });
});
