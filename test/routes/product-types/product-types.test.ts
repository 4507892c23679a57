import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";
import { pointers, readAndCache, seedTaxonomy, send } from "../../support/reference";

type Category = { id: number; name: string; taxonomy_id: number };
type ProductType = {
  id: number;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  categories?: Category[];
};
type Page = { items: ProductType[]; total: number; page: number; size: number; pages: number };

let admin: string;
let user: string;
let taxonomyId: number;
let category: Record<string, number>;
const type: Record<string, number> = {};

// Seeded with SQL where fixed creation times matter; the taxonomy and its categories are plain
// fixtures, so SQL too.
beforeAll(async () => {
  admin = (await bootstrapAdmin()).tokens.access_token;
  user = (await verifiedUser("maker")).tokens.access_token;
  ({ taxonomyId, category } = await seedTaxonomy({ name: "Products", version: "2024", domains: ["products"] }, [
    "Electronics",
    "Kitchen",
    "Phones",
  ]));
  const seed: [string, number, string[]][] = [
    ["Smartphone", 3000, ["Electronics", "Phones"]],
    ["kettle", 1000, ["Kitchen"]],
    ["Laptop", 2000, ["Electronics"]],
  ];
  for (const [name, at, links] of seed) {
    const row = await env.DB.prepare(
      "INSERT INTO product_types (name, description, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING id",
    )
      .bind(name, `About ${name}`, at, at)
      .first<{ id: number }>();
    type[name] = row!.id;
    for (const link of links)
      await env.DB.prepare("INSERT INTO product_type_categories (product_type_id, category_id) VALUES (?, ?)")
        .bind(row!.id, category[link])
        .run();
  }
});

const names = async (query: string) => {
  const response = await readAndCache(`/v1/product-types?${query}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as Page).items.map((item) => item.name);
};

let sequence = 0;
async function created(body: Record<string, unknown> = {}): Promise<ProductType> {
  const response = await send("POST", "/v1/admin/product-types", admin, { name: `Type ${sequence++}`, ...body });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as ProductType;
}

// Reads come first: later tests add product types.
describe("GET /v1/product-types", () => {
  it("pages product types by name, without categories, in one round trip", async () => {
    const response = await api("/v1/product-types");
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    const body = (await response.json()) as Page;
    expect(body).toMatchObject({ total: 3, page: 1, size: 50, pages: 1 });
    expect(body.items).toEqual([
      {
        id: type.kettle,
        name: "kettle",
        description: "About kettle",
        created_at: "1970-01-01T00:16:40Z",
        updated_at: "1970-01-01T00:16:40Z",
      },
      {
        id: type.Laptop,
        name: "Laptop",
        description: "About Laptop",
        created_at: "1970-01-01T00:33:20Z",
        updated_at: "1970-01-01T00:33:20Z",
      },
      {
        id: type.Smartphone,
        name: "Smartphone",
        description: "About Smartphone",
        created_at: "1970-01-01T00:50:00Z",
        updated_at: "1970-01-01T00:50:00Z",
      },
    ]);
  });

  it("filters by name and linked category, orders and pages; unknown parameters 422", async () => {
    expect(await names("name[ilike]=T")).toEqual(["kettle", "Laptop", "Smartphone"]);
    expect(await names("name[ilike]=PHONE")).toEqual(["Smartphone"]);
    expect(await names(`category_id=${category.Electronics}`)).toEqual(["Laptop", "Smartphone"]);
    expect(await names(`category_id=${category.Phones}&name[ilike]=lap`)).toEqual([]);
    expect(await names("category_id=999999")).toEqual([]);
    expect(await names("order_by=-created_at")).toEqual(["Smartphone", "Laptop", "kettle"]);
    expect(await names("order_by=-name")).toEqual(["Smartphone", "Laptop", "kettle"]);
    expect(await names("order_by=id")).toEqual(["Smartphone", "kettle", "Laptop"]);
    expect(await names("size=2&page=2")).toEqual(["Smartphone"]);
    expect(await names("size=2&page=3")).toEqual([]);
    expect(await pointers(await api("/v1/product-types?order_by=density_kg_m3"))).toEqual(["#/query/order_by"]);
    expect(await pointers(await api("/v1/product-types?category_id=x"))).toEqual(["#/query/category_id"]);
    expect(await pointers(await api("/v1/product-types?is_crm=true"))).toEqual(["#/query/is_crm"]);
  });
});

describe("GET /v1/product-types/{id}", () => {
  it("answers the type with its categories in one round trip; 404 PRODUCT_TYPE_NOT_FOUND", async () => {
    const response = await api(`/v1/product-types/${type.Smartphone}`);
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(((await response.json()) as ProductType).categories).toEqual([
      { id: category.Electronics, name: "Electronics", taxonomy_id: taxonomyId },
      { id: category.Phones, name: "Phones", taxonomy_id: taxonomyId },
    ]);
    await expectProblem(await api("/v1/product-types/999999"), 404, "PRODUCT_TYPE_NOT_FOUND");
    expect(await pointers(await api("/v1/product-types/0"))).toEqual(["#/path/id"]);
  });

  it("serves a repeat read from KV without D1", async () => {
    const path = `/v1/product-types/${type.Laptop}`;
    const body = await (await readAndCache(path)).json();
    const hit = await api(path);
    expect(hit.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(hit)).toBe(0);
    expect(await hit.json()).toEqual(body);
  });
});

describe("admin writes", () => {
  it("anonymous 401, an ordinary user 403, on every admin product-type route", async () => {
    const routes: [string, string, unknown][] = [
      ["POST", "/v1/admin/product-types", { name: "Nope" }],
      ["PATCH", `/v1/admin/product-types/${type.kettle}`, { name: "Nope" }],
      ["DELETE", `/v1/admin/product-types/${type.kettle}`, undefined],
      ["POST", `/v1/admin/product-types/${type.kettle}/categories`, { category_ids: [category.Kitchen] }],
      ["DELETE", `/v1/admin/product-types/${type.kettle}/categories/${category.Kitchen}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      await expectProblem(await send(method, path, null, body), 401, "AUTHENTICATION_REQUIRED");
      await expectProblem(await send(method, path, user, body), 403, "SUPERUSER_REQUIRED");
    }
    expect(((await (await api(`/v1/product-types/${type.kettle}`)).json()) as ProductType).categories).toHaveLength(1);
  });

  it("creates (201, Location, audited), refusing short names 422 and taken ones 409", async () => {
    const logs = captureLogs();
    let response: Response;
    try {
      response = await send("POST", "/v1/admin/product-types", admin, { name: " Toaster ", description: "Makes toast." });
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(201);
    const body = (await response.json()) as ProductType;
    expect(body).toMatchObject({ name: "Toaster", description: "Makes toast.", categories: [] });
    expect(response.headers.get("location")).toBe(`/v1/product-types/${body.id}`);
    expect(logs.entries().find((entry) => entry.event === "admin.reference.created")).toMatchObject({ kind: "product_type", id: body.id });
    expect(await (await api(`/v1/product-types/${body.id}`)).json()).toEqual(body);

    expect(await pointers(await send("POST", "/v1/admin/product-types", admin, { name: "X" }))).toEqual(["/name"]);
    expect(await pointers(await send("POST", "/v1/admin/product-types", admin, { name: "y".repeat(101) }))).toEqual(["/name"]);
    expect(await pointers(await send("POST", "/v1/admin/product-types", admin, { name: "Radio", version: 2 }))).toEqual(["/version"]);
    await expectProblem(await send("POST", "/v1/admin/product-types", admin, { name: "Toaster" }), 409, "PRODUCT_TYPE_NAME_TAKEN");
  });

  it("updates, refusing a taken name 409 and an unknown id 404", async () => {
    const mine = await created({ description: "Old" });
    const response = await send("PATCH", `/v1/admin/product-types/${mine.id}`, admin, { description: null });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: mine.id, name: mine.name, description: null, categories: [] });
    expect(await pointers(await send("PATCH", `/v1/admin/product-types/${mine.id}`, admin, { name: "a" }))).toEqual(["/name"]);
    await expectProblem(
      await send("PATCH", `/v1/admin/product-types/${mine.id}`, admin, { name: "Laptop" }),
      409,
      "PRODUCT_TYPE_NAME_TAKEN",
    );
    await expectProblem(await send("PATCH", "/v1/admin/product-types/999999", admin, { name: "Ghost" }), 404, "PRODUCT_TYPE_NOT_FOUND");
  });

  it("deletes a type, leaving its products without one", async () => {
    const doomed = await created({ name: "Fax machine" });
    const product = await postJson(
      "/v1/products",
      { name: "Old fax", product_type_id: doomed.id, components: [{ name: "Roller", amount_in_parent: 1, product_type_id: doomed.id }] },
      bearer(user),
    );
    expect(product.status, await product.clone().text()).toBe(201);
    const { id, components, version } = (await product.json()) as { id: number; version: number; components: { id: number }[] };

    const logs = captureLogs();
    let response: Response;
    try {
      response = await send("DELETE", `/v1/admin/product-types/${doomed.id}`, admin);
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(204);
    expect(logs.entries().find((entry) => entry.event === "admin.reference.deleted")).toMatchObject({
      kind: "product_type",
      id: doomed.id,
    });
    await expectProblem(await api(`/v1/product-types/${doomed.id}`), 404, "PRODUCT_TYPE_NOT_FOUND");
    await expectProblem(await send("DELETE", `/v1/admin/product-types/${doomed.id}`, admin), 404, "PRODUCT_TYPE_NOT_FOUND");

    const after = (await (await api(`/v1/products/${id}`)).json()) as {
      product_type_id: number | null;
      product_type: unknown;
      version: number;
    };
    expect(after).toMatchObject({ product_type_id: null, product_type: null, version });
    expect(await (await api(`/v1/components/${components[0]!.id}`)).json()).toMatchObject({ product_type_id: null });
  });
});

describe("category links", () => {
  it("adds (existing kept), removes, and the reads, the filter and the cache follow", async () => {
    const mine = await created({ name: "Blender" });
    const path = `/v1/product-types/${mine.id}`;
    const filtered = `category_id=${category.Kitchen}`;
    expect(await names(filtered)).toEqual(["kettle"]);
    await readAndCache(path);
    expect((await api(path)).headers.get("x-cache")).toBe("hit");

    const added = await send("POST", `/v1/admin/product-types/${mine.id}/categories`, admin, { category_ids: [category.Kitchen] });
    expect(added.status).toBe(200);
    const again = await send("POST", `/v1/admin/product-types/${mine.id}/categories`, admin, {
      category_ids: [category.Electronics, category.Kitchen],
    });
    const body = (await again.json()) as ProductType;
    expect(body.categories?.map((c) => c.name)).toEqual(["Electronics", "Kitchen"]);

    const fresh = await readAndCache(path);
    expect(fresh.headers.get("x-cache")).toBe("miss");
    expect(await fresh.json()).toEqual(body);
    expect(await names(filtered)).toEqual(["Blender", "kettle"]);

    expect((await send("DELETE", `/v1/admin/product-types/${mine.id}/categories/${category.Kitchen}`, admin)).status).toBe(204);
    expect(((await (await readAndCache(path)).json()) as ProductType).categories?.map((c) => c.name)).toEqual(["Electronics"]);
    expect(await names(filtered)).toEqual(["kettle"]);
    await expectProblem(
      await send("DELETE", `/v1/admin/product-types/${mine.id}/categories/${category.Kitchen}`, admin),
      404,
      "CATEGORY_LINK_NOT_FOUND",
    );
    await expectProblem(
      await send("DELETE", `/v1/admin/product-types/999999/categories/${category.Kitchen}`, admin),
      404,
      "PRODUCT_TYPE_NOT_FOUND",
    );
  });

  it("refuses unknown categories 422 (linking none) and unknown types 404", async () => {
    const mine = await created();
    const response = await send("POST", `/v1/admin/product-types/${mine.id}/categories`, admin, {
      category_ids: [999999, category.Phones],
    });
    expect(await pointers(response)).toEqual(["/category_ids/0"]);
    expect(((await (await api(`/v1/product-types/${mine.id}`)).json()) as ProductType).categories).toEqual([]);
    await expectProblem(
      await send("POST", "/v1/admin/product-types/999999/categories", admin, { category_ids: [category.Phones] }),
      404,
      "PRODUCT_TYPE_NOT_FOUND",
    );
  });
});
