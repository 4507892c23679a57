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

describe("what the cache stores", () => {
  it("never stores answers to free-text or range filters, second spellings of numbers, or empty pages", async () => {
    await env.DB.prepare("INSERT INTO materials (name, density_kg_m3) VALUES ('Cache test steel', 7850)").run();
    for (const path of [
      "/v1/materials?name[ilike]=steel",
      "/v1/materials?density_kg_m3[ge]=1000",
      "/v1/materials?page=01",
      "/v1/materials?page=999",
    ]) {
      expect((await api(path)).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await env.KV.list({ prefix: "cache:reference-data:/v1/materials?" })).keys).toEqual([]);
    // The plain form is stored.
    await readUntilHit("/v1/materials?page=1");
  });
});
