import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";

async function clear(namespace: string): Promise<Response> {
  const admin = await bootstrapAdmin();
  return api(`/v1/admin/cache/clear/${namespace}`, { method: "POST", headers: bearer(admin.tokens.access_token) });
}

async function keysUnder(prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await env.KV.list({ prefix, ...(cursor === undefined ? {} : { cursor }) });
    names.push(...page.keys.map((key) => key.name));
    if (page.list_complete) return names;
    cursor = page.cursor;
  }
}

async function seed(keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 100) {
    await Promise.all(keys.slice(i, i + 100).map((key) => env.KV.put(key, "cached")));
  }
}

describe("POST /v1/admin/cache/clear/{namespace}", () => {
  it("deletes only the keys of the namespace and says how many", async () => {
    await seed(["cache:reference-data:units", "cache:reference-data:materials:1", "cache:reference-data:tree:7"]);
    await seed(["cache:stats:overview", "cache:stats:brands", "unrelated:key", "cache:reference-datax:other"]);
    const admin = await bootstrapAdmin();
    const logs = captureLogs();
    let response: Response;
    try {
      response = await clear("reference-data");
      expect(logs.entries().find((entry) => entry.event === "admin.cache.cleared")).toMatchObject({
        actor_id: admin.id,
        namespace: "reference-data",
        keys_deleted: 3,
      });
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ namespace: "reference-data", keys_deleted: 3 });
    expect(await keysUnder("cache:reference-data:")).toEqual([]);
    expect(await keysUnder("cache:stats:")).toHaveLength(2);
    expect(await env.KV.get("unrelated:key")).toBe("cached");
    expect(await env.KV.get("cache:reference-datax:other")).toBe("cached");

    // Clearing again finds nothing.
    expect(await (await clear("reference-data")).json()).toEqual({ namespace: "reference-data", keys_deleted: 0 });
    expect(await (await clear("stats")).json()).toEqual({ namespace: "stats", keys_deleted: 2 });
  });

  it("follows the list cursor past the first 1,000 keys", async () => {
    await seed(Array.from({ length: 1234 }, (_, i) => `cache:stats:k${i}`));
    const response = await clear("stats");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ namespace: "stats", keys_deleted: 1234 });
    expect(await keysUnder("cache:stats:")).toEqual([]);
    // 1,234 KV writes and deletes: seconds on a busy two-core machine, beyond the 5 s default.
  }, 30_000);

  it("answers 404 CACHE_NAMESPACE_NOT_FOUND for any other namespace", async () => {
    await seed(["cache:sessions:x"]);
    for (const namespace of ["sessions", "Stats", "reference-data-x", "cache"]) {
      await expectProblem(await clear(namespace), 404, "CACHE_NAMESPACE_NOT_FOUND");
    }
    expect(await env.KV.get("cache:sessions:x")).toBe("cached");
  });
});
