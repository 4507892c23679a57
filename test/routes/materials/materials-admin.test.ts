import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";
import { pointers, readAndCache, seedTaxonomy, send } from "../../support/reference";

type Category = { id: number; name: string; taxonomy_id: number };
type Material = {
  id: number;
  name: string;
  description: string | null;
  density_kg_m3: number | null;
  is_crm: boolean;
  updated_at: string;
  categories: Category[];
};

let admin: string;
let user: string;
let taxonomyId: number;
let category: Record<string, number>;

// The taxonomy and its categories are fixtures here, so SQL: their own routes have tests of their own.
beforeAll(async () => {
  admin = (await bootstrapAdmin()).tokens.access_token;
  user = (await verifiedUser("maker")).tokens.access_token;
  ({ taxonomyId, category } = await seedTaxonomy({ name: "Materials", version: "1", domains: ["materials"] }, [
    "Metals",
    "Alloys",
    "Polymers",
    "Ceramics",
  ]));
});

let sequence = 0;
async function created(body: Record<string, unknown> = {}): Promise<Material> {
  const response = await send("POST", "/v1/admin/materials", admin, { name: `Material ${sequence++}`, ...body });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Material;
}

const names = async (path: string) => ((await (await readAndCache(path)).json()) as { items: Material[] }).items.map((m) => m.name);

describe("who may write", () => {
  it("anonymous 401, an ordinary user 403, on every admin material route", async () => {
    const material = await created();
    const routes: [string, string, unknown][] = [
      ["POST", "/v1/admin/materials", { name: "Nope" }],
      ["PATCH", `/v1/admin/materials/${material.id}`, { name: "Nope" }],
      ["DELETE", `/v1/admin/materials/${material.id}`, undefined],
      ["POST", `/v1/admin/materials/${material.id}/categories`, { category_ids: [category.Metals] }],
      ["DELETE", `/v1/admin/materials/${material.id}/categories/${category.Metals}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      await expectProblem(await send(method, path, null, body), 401, "AUTHENTICATION_REQUIRED");
      await expectProblem(await send(method, path, user, body), 403, "SUPERUSER_REQUIRED");
    }
    expect((await (await api(`/v1/materials/${material.id}`)).json()) as Material).toMatchObject({ name: material.name, categories: [] });
  });
});

describe("POST /v1/admin/materials", () => {
  it("creates with defaults, answers 201 with Location, and audits", async () => {
    const logs = captureLogs();
    let response: Response;
    try {
      response = await send("POST", "/v1/admin/materials", admin, { name: "  Copper  " });
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(201);
    const body = (await response.json()) as Material;
    expect(response.headers.get("location")).toBe(`/v1/materials/${body.id}`);
    expect(body).toMatchObject({ name: "Copper", description: null, density_kg_m3: null, is_crm: false, categories: [] });
    const event = logs.entries().find((entry) => entry.event === "admin.reference.created");
    expect(event).toMatchObject({ actor_id: (await bootstrapAdmin()).id, kind: "material", id: body.id });
    expect(await (await api(response.headers.get("location")!)).json()).toEqual(body);

    const full = await created({ description: "Shiny", density_kg_m3: 19300, is_crm: true });
    expect(full).toMatchObject({ description: "Shiny", density_kg_m3: 19300, is_crm: true });
  });

  it("refuses a density of 0 or less, bad names and unknown members with 422 pointing at them", async () => {
    for (const density of [0, -1, -0.5, "905"]) {
      expect(await pointers(await send("POST", "/v1/admin/materials", admin, { name: "Dense", density_kg_m3: density }))).toEqual([
        "/density_kg_m3",
      ]);
    }
    expect(await pointers(await send("POST", "/v1/admin/materials", admin, { name: "   " }))).toEqual(["/name"]);
    expect(await pointers(await send("POST", "/v1/admin/materials", admin, { name: "x".repeat(101) }))).toEqual(["/name"]);
    expect(await pointers(await send("POST", "/v1/admin/materials", admin, {}))).toEqual(["/name"]);
    expect(await pointers(await send("POST", "/v1/admin/materials", admin, { name: "Ok", id: 5, categories: [] }))).toEqual([
      "/id",
      "/categories",
    ]);
    expect(await pointers(await send("POST", "/v1/admin/materials", admin, { name: "Ok", is_crm: "yes" }))).toEqual(["/is_crm"]);
    expect(await names("/v1/materials?name[ilike]=Dense")).toEqual([]);
  });

  it("refuses a name another material has with 409 MATERIAL_NAME_TAKEN", async () => {
    await created({ name: "Brass" });
    await expectProblem(await send("POST", "/v1/admin/materials", admin, { name: "Brass" }), 409, "MATERIAL_NAME_TAKEN");
  });
});

describe("PATCH /v1/admin/materials/{id}", () => {
  it("changes the given members, keeps the others and moves updated_at only on a change", async () => {
    const material = await created({ description: "Grey", density_kg_m3: 7000 });
    await env.DB.prepare("UPDATE materials SET updated_at = 1000 WHERE id = ?").bind(material.id).run();
    const same = await send("PATCH", `/v1/admin/materials/${material.id}`, admin, { density_kg_m3: 7000, description: "Grey" });
    expect(same.status).toBe(200);
    expect(((await same.json()) as Material).updated_at).toBe("1970-01-01T00:16:40Z");

    const logs = captureLogs();
    let response: Response;
    try {
      response = await send("PATCH", `/v1/admin/materials/${material.id}`, admin, {
        density_kg_m3: 7150.5,
        is_crm: true,
        description: "Grey",
      });
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(200);
    expect(logs.entries().find((entry) => entry.event === "admin.reference.updated")).toMatchObject({
      kind: "material",
      id: material.id,
      fields: ["density_kg_m3", "is_crm"],
    });
    // The token check, then one batch for the update and the categories.
    expect(roundTrips(response)).toBe(2);
    const body = (await response.json()) as Material;
    expect(body).toMatchObject({ name: material.name, description: "Grey", density_kg_m3: 7150.5, is_crm: true, categories: [] });
    expect(body.updated_at).not.toBe("1970-01-01T00:16:40Z");

    const cleared = (await (
      await send("PATCH", `/v1/admin/materials/${material.id}`, admin, { density_kg_m3: null, description: null })
    ).json()) as Material;
    expect(cleared).toMatchObject({ density_kg_m3: null, description: null, is_crm: true });
    const empty = await send("PATCH", `/v1/admin/materials/${material.id}`, admin, {});
    expect(empty.status).toBe(200);
    expect(await empty.json()).toEqual(cleared);
  });

  it("refuses bad values 422, a taken name 409, an unknown id 404", async () => {
    const material = await created();
    await created({ name: "Bronze" });
    expect(await pointers(await send("PATCH", `/v1/admin/materials/${material.id}`, admin, { density_kg_m3: -3 }))).toEqual([
      "/density_kg_m3",
    ]);
    expect(await pointers(await send("PATCH", `/v1/admin/materials/${material.id}`, admin, { name: "" }))).toEqual(["/name"]);
    expect(
      await pointers(await send("PATCH", `/v1/admin/materials/${material.id}`, admin, { created_at: "2020-01-01T00:00:00Z" })),
    ).toEqual(["/created_at"]);
    await expectProblem(await send("PATCH", `/v1/admin/materials/${material.id}`, admin, { name: "Bronze" }), 409, "MATERIAL_NAME_TAKEN");
    await expectProblem(await send("PATCH", "/v1/admin/materials/999999", admin, { name: "Ghost" }), 404, "MATERIAL_NOT_FOUND");
    await expectProblem(await send("PATCH", "/v1/admin/materials/999999", admin, {}), 404, "MATERIAL_NOT_FOUND");
    expect((await (await api(`/v1/materials/${material.id}`)).json()) as Material).toMatchObject({ name: material.name });
  });
});

describe("DELETE /v1/admin/materials/{id}", () => {
  it("deletes a material with its links and audits; 404 after", async () => {
    const material = await created();
    expect((await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, { category_ids: [category.Metals] })).status).toBe(
      200,
    );
    const logs = captureLogs();
    let response: Response;
    try {
      response = await send("DELETE", `/v1/admin/materials/${material.id}`, admin);
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(204);
    expect(logs.entries().find((entry) => entry.event === "admin.reference.deleted")).toMatchObject({ kind: "material", id: material.id });
    await expectProblem(await api(`/v1/materials/${material.id}`), 404, "MATERIAL_NOT_FOUND");
    await expectProblem(await send("DELETE", `/v1/admin/materials/${material.id}`, admin), 404, "MATERIAL_NOT_FOUND");
    const links = await env.DB.prepare("SELECT count(*) AS n FROM material_categories WHERE material_id = ?")
      .bind(material.id)
      .first<{ n: number }>();
    expect(links!.n).toBe(0);
  });

  it("refuses with 409 MATERIAL_IN_USE while a bill of materials names it", async () => {
    const material = await created();
    const product = await postJson(
      "/v1/products",
      {
        name: "Kettle",
        components: [{ name: "Element", amount_in_parent: 1, bill_of_materials: [{ material_id: material.id, quantity: 0.1 }] }],
      },
      bearer(user),
    );
    expect(product.status, await product.clone().text()).toBe(201);
    const { id: productId } = (await product.json()) as { id: number };
    const refused = await expectProblem(await send("DELETE", `/v1/admin/materials/${material.id}`, admin), 409, "MATERIAL_IN_USE");
    expect(refused.detail).toMatch(/1 bill-of-materials entry/);
    expect((await api(`/v1/materials/${material.id}`)).status).toBe(200);

    expect((await send("DELETE", `/v1/products/${productId}`, user)).status).toBe(204);
    expect((await send("DELETE", `/v1/admin/materials/${material.id}`, admin)).status).toBe(204);
  });
});

describe("category links", () => {
  it("adds links keeping existing ones, and the reads and the category filter follow", async () => {
    const material = await created({ name: "Zamak" });
    const first = await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, {
      category_ids: [category.Metals, category.Alloys],
    });
    expect(first.status).toBe(200);
    // The token check, then one batch: checks, insert and the record with its categories.
    expect(roundTrips(first)).toBe(2);
    expect(((await first.json()) as Material).categories.map((c) => c.name)).toEqual(["Alloys", "Metals"]);

    const logs = captureLogs();
    let second: Response;
    try {
      second = await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, {
        category_ids: [category.Alloys, category.Polymers, category.Polymers],
      });
    } finally {
      logs.restore();
    }
    expect(second.status).toBe(200);
    const body = (await second.json()) as Material;
    expect(body).toMatchObject({ id: material.id, name: "Zamak" });
    expect(body.categories).toEqual([
      { id: category.Alloys, name: "Alloys", taxonomy_id: taxonomyId },
      { id: category.Metals, name: "Metals", taxonomy_id: taxonomyId },
      { id: category.Polymers, name: "Polymers", taxonomy_id: taxonomyId },
    ]);
    expect(logs.entries().find((entry) => entry.event === "admin.reference.updated")).toMatchObject({
      kind: "material",
      id: material.id,
      categories_added: [category.Polymers],
    });
    expect(await (await readAndCache(`/v1/materials/${material.id}`)).json()).toEqual(body);
    expect(await names(`/v1/materials?category_id=${category.Polymers}`)).toEqual(["Zamak"]);

    expect((await send("DELETE", `/v1/admin/materials/${material.id}/categories/${category.Polymers}`, admin)).status).toBe(204);
    expect(((await (await readAndCache(`/v1/materials/${material.id}`)).json()) as Material).categories.map((c) => c.name)).toEqual([
      "Alloys",
      "Metals",
    ]);
    expect(await names(`/v1/materials?category_id=${category.Polymers}`)).toEqual([]);
    await expectProblem(
      await send("DELETE", `/v1/admin/materials/${material.id}/categories/${category.Polymers}`, admin),
      404,
      "CATEGORY_LINK_NOT_FOUND",
    );
  });

  it("refuses unknown categories with 422 pointing at each, linking none of the list", async () => {
    const material = await created();
    const response = await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, {
      category_ids: [category.Ceramics, 999999, category.Metals, 888888],
    });
    expect(await pointers(response)).toEqual(["/category_ids/1", "/category_ids/3"]);
    expect(((await (await api(`/v1/materials/${material.id}`)).json()) as Material).categories).toEqual([]);

    expect(await pointers(await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, { category_ids: [] }))).toEqual([
      "/category_ids",
    ]);
    const tooMany = Array.from({ length: 101 }, (_, i) => i + 1);
    expect(await pointers(await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, { category_ids: tooMany }))).toEqual([
      "/category_ids",
    ]);
    expect(await pointers(await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, { category_ids: ["1"] }))).toEqual([
      "/category_ids/0",
    ]);
    expect(
      await pointers(await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, { category_ids: [1], extra: 1 })),
    ).toEqual(["/extra"]);
  });

  it("answers 404 MATERIAL_NOT_FOUND for an unknown material", async () => {
    await expectProblem(
      await send("POST", "/v1/admin/materials/999999/categories", admin, { category_ids: [category.Metals] }),
      404,
      "MATERIAL_NOT_FOUND",
    );
    await expectProblem(
      await send("POST", "/v1/admin/materials/999999/categories", admin, { category_ids: [777777] }),
      404,
      "MATERIAL_NOT_FOUND",
    );
    await expectProblem(await send("DELETE", `/v1/admin/materials/999999/categories/${category.Metals}`, admin), 404, "MATERIAL_NOT_FOUND");
  });
});

describe("the cache and admin writes", () => {
  it("a write clears the cached reads, so the next read is a miss that shows the change", async () => {
    const material = await created({ name: "Nickel", density_kg_m3: 8900 });
    const path = `/v1/materials/${material.id}`;
    // A list without free-text filters (those answers are never stored: unbounded keys).
    const listPath = "/v1/materials?order_by=-density_kg_m3&size=100";
    for (const p of [path, listPath]) {
      await readAndCache(p);
      const hit = await api(p);
      expect(hit.headers.get("x-cache")).toBe("hit");
      expect(roundTrips(hit)).toBe(0);
    }

    expect((await send("PATCH", path.replace("/v1/", "/v1/admin/"), admin, { name: "Nickel 201" })).status).toBe(200);
    const after = await readAndCache(path);
    expect(after.headers.get("x-cache")).toBe("miss");
    expect(((await after.json()) as Material).name).toBe("Nickel 201");
    const listAfter = await readAndCache(listPath);
    expect(listAfter.headers.get("x-cache")).toBe("miss");
    expect(((await listAfter.json()) as { items: Material[] }).items.map((m) => m.name)).toContain("Nickel 201");

    // Links and deletes clear it too.
    expect((await send("POST", `/v1/admin/materials/${material.id}/categories`, admin, { category_ids: [category.Metals] })).status).toBe(
      200,
    );
    expect(((await (await readAndCache(path)).json()) as Material).categories.map((c) => c.name)).toEqual(["Metals"]);
    expect((await send("DELETE", `/v1/admin/materials/${material.id}`, admin)).status).toBe(204);
    await expectProblem(await api(path), 404, "MATERIAL_NOT_FOUND");
    expect(await names(listPath)).not.toContain("Nickel 201");
  });

  it("a create clears the cached list", async () => {
    const list = "/v1/materials?order_by=-created_at&size=100";
    expect(await names(list)).not.toContain("Tungsten");
    expect((await api(list)).headers.get("x-cache")).toBe("hit");
    await created({ name: "Tungsten" });
    expect(await names(list)).toContain("Tungsten");
  });
});
