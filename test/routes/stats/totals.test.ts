import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { bootstrapAdmin } from "../../support/mfa";
import { readUntilHit } from "../../support/reference";

interface Totals {
  generated_at: string;
  totals: { teardowns: number; parts: number; mass_kg: number; images: number; users: number };
}

let token: string;

beforeAll(async () => {
  await bootstrapAdmin();
  token = (await verifiedUser("alice")).tokens.access_token;
});

async function clearStats(): Promise<void> {
  const admin = await bootstrapAdmin();
  const response = await api("/v1/admin/cache/clear/stats", { method: "POST", headers: bearer(admin.tokens.access_token) });
  expect(response.status).toBe(200);
}

/** Fresh totals: the cache cleared first (totals take no parameters, so no query string can miss it). */
async function freshTotals(): Promise<{ response: Response; body: Totals }> {
  await clearStats();
  const response = await api("/v1/stats/totals");
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get("x-cache")).toBe("miss");
  return { response, body: (await response.json()) as Totals };
}

async function createProduct(body: Record<string, unknown>): Promise<void> {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
}

describe("GET /v1/stats/totals", () => {
  it("counts base products, components at every depth, base products' mass and active accounts, in one round trip", async () => {
    const before = await freshTotals();
    expect(roundTrips(before.response)).toBe(1);
    expect(before.response.headers.get("cache-control")).toBe("public, max-age=60");
    expect(before.body.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(before.body.totals.images).toBe(0);

    // Components' own weights are not added: they are part of their base product's.
    await createProduct({
      name: "Grinder",
      weight_g: 1450,
      components: [
        { name: "Motor", amount_in_parent: 1, weight_g: 900, components: [{ name: "Brush", amount_in_parent: 2 }] },
        { name: "Hopper", amount_in_parent: 1 },
      ],
    });
    await createProduct({ name: "Lamp", weight_g: 333.25 });
    // Images count once the malware scan passed: a clean row counts, a pending one does not.
    const image = (id: string, status: string) =>
      env.DB.prepare(
        `INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, width, height, created_at, updated_at)
         SELECT ?, max(id), 'k.jpg', 'k.jpg', 'image/jpeg', 10, ?, 1, 1, 0, 0 FROM products`,
      ).bind(id, status);
    await env.DB.batch([image("a".repeat(32), "clean"), image("b".repeat(32), "pending")]);
    await createProduct({ name: "Fan" });
    await registerUser();
    const leaver = await registerUser();
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(leaver.id).run();

    const after = await freshTotals();
    expect(after.body.totals).toEqual({
      teardowns: before.body.totals.teardowns + 3,
      parts: before.body.totals.parts + 3,
      mass_kg: expect.closeTo(before.body.totals.mass_kg + 1.783, 3),
      images: before.body.totals.images + 1,
      users: before.body.totals.users + 1,
    });
    // Three decimals: 1,783.25 g is 1.783 kg.
    expect(Number(after.body.totals.mass_kg.toFixed(3))).toBe(after.body.totals.mass_kg);
  });

  it("never counts the system account, even if it were active", async () => {
    const before = await freshTotals();
    await env.DB.prepare("UPDATE users SET is_active = 1 WHERE is_system = 1").run();
    try {
      expect((await freshTotals()).body.totals.users).toBe(before.body.totals.users);
    } finally {
      await env.DB.prepare("UPDATE users SET is_active = 0 WHERE is_system = 1").run();
    }
  });

  it("answers from the cache until it is cleared, without touching D1", async () => {
    await freshTotals();
    // The answer is stored after the response (and at most once a second per key): wait for it.
    const stored = (await (await readUntilHit("/v1/stats/totals")).json()) as Totals;
    await createProduct({ name: "Kettle", weight_g: 1000 });
    const cached = await api("/v1/stats/totals");
    expect(cached.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(cached)).toBe(0);
    expect(await cached.json()).toEqual(stored);

    const fresh = await freshTotals();
    expect(fresh.body.totals.teardowns).toBe(stored.totals.teardowns + 1);
  });

  it("takes no parameters: any is refused with 422", async () => {
    const problem = await expectProblem(await api("/v1/stats/totals?scope=all"), 422, "VALIDATION_FAILED");
    expect(problem.errors?.map((error) => error.pointer)).toEqual(["#/query/scope"]);
  });
});
