import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clearCache as clear, keysUnder, seedKeys as seed } from "../../support/cache";
import { expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";

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

  it("answers 404 CACHE_NAMESPACE_NOT_FOUND for any other namespace", async () => {
    await seed(["cache:sessions:x"]);
    for (const namespace of ["sessions", "Stats", "reference-data-x", "cache"]) {
      await expectProblem(await clear(namespace), 404, "CACHE_NAMESPACE_NOT_FOUND");
    }
    expect(await env.KV.get("cache:sessions:x")).toBe("cached");
  });
});
