import { describe, expect, it } from "vitest";
import { clearCache as clear, keysUnder, seedKeys as seed } from "../../support/cache";

// The slow tier (npm run test:slow): 1,234 KV writes and deletes.
describe("POST /v1/admin/cache/clear/{namespace}", () => {
  it("follows the list cursor past the first 1,000 keys", async () => {
    await seed(Array.from({ length: 1234 }, (_, i) => `cache:stats:k${i}`));
    const response = await clear("stats");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ namespace: "stats", keys_deleted: 1234 });
    expect(await keysUnder("cache:stats:")).toEqual([]);
    // 1,234 KV writes and deletes: seconds on a busy two-core machine, beyond the 5 s default.
  }, 30_000);
});
