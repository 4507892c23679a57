import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, postJson } from "../support/accounts";
import { api } from "../support/http";
import { bootstrapAdmin } from "../support/mfa";
import { readUntilHit } from "../support/reference";

// The KV response cache, through a cached public route (/v1/units).

describe("the response cache", () => {
  it("keys by path and canonical query order", async () => {
    await readUntilHit("/v1/units");
    expect((await env.KV.list({ prefix: "cache:reference-data:/v1/units" })).keys.map((key) => key.name)).toEqual([
      "cache:reference-data:/v1/units",
    ]);
  });

  it("ignores a value computed before the last clear, even one written back after it", async () => {
    await readUntilHit("/v1/units");
    const admin = await bootstrapAdmin();
    const cleared = await postJson("/v1/admin/cache/clear/reference-data", {}, bearer(admin.tokens.access_token));
    expect(cleared.status).toBe(200);
    const clearedAt = Number(await env.KV.get("cache-cleared:reference-data"));
    expect(clearedAt).toBeGreaterThan(0);
    // What a read that started before the clear and finished after it would leave behind.
    await env.KV.put("cache:reference-data:/v1/units", '["stale"]', { metadata: { cacheControl: null, computedAt: clearedAt - 1 } });
    const response = await api("/v1/units");
    expect(response.headers.get("x-cache")).toBe("miss");
    expect(await response.json()).toEqual(["kg", "g", "m", "cm"]);
    const again = await readUntilHit("/v1/units");
    expect(await again.json()).toEqual(["kg", "g", "m", "cm"]);
  });

  it("never caches an error answer", async () => {
    const missing = await api("/v1/materials/999999");
    expect(missing.status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const keys = (await env.KV.list({ prefix: "cache:reference-data:/v1/materials/999999" })).keys;
    expect(keys).toEqual([]);
  });
});
