import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

interface Categories {
  generated_at: string;
  limit: number;
  scope: string;
  categories: { name: string; count: number }[];
}

async function insertId(query: string, ...values: unknown[]): Promise<number> {
  return (await env.DB.prepare(`${query} RETURNING id`)
    .bind(...values)
    .first<{ id: number }>())!.id;
}

async function createProduct(token: string, body: Record<string, unknown>): Promise<void> {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
}

async function categories(query: string): Promise<{ response: Response; body: Categories }> {
  const response = await api(`/v1/stats/categories${query ? `?${query}` : ""}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, body: (await response.json()) as Categories };
}

beforeAll(async () => {
  // The taxonomy, categories, product types and their links go in with direct SQL: the reference
  // data routes that would create them are being built alongside these.
  const products = await insertId("INSERT INTO taxonomies (name, version, domains) VALUES ('Products', '1', '[\"products\"]')");
  const other = await insertId("INSERT INTO taxonomies (name, version, domains) VALUES ('Other', '1', '[\"other\"]')");
  const category = (name: string, taxonomy: number, supercategory: number | null = null) =>
    insertId("INSERT INTO categories (name, taxonomy_id, supercategory_id) VALUES (?, ?, ?)", name, taxonomy, supercategory);
  const appliances = await category("Appliances", products);
  const kitchen = await category("Kitchen", products, appliances);
  const electronics = await category("Electronics", products);
  const batteries = await category("Batteries", products);
  await category("Unused", products);
  // Same name, other taxonomy: a category of its own.
  const otherElectronics = await category("Electronics", other);
  const type = async (name: string, linked: number[]) => {
    const id = await insertId("INSERT INTO product_types (name) VALUES (?)", name);
    for (const categoryId of linked) {
      await env.DB.prepare("INSERT INTO product_type_categories (product_type_id, category_id) VALUES (?, ?)").bind(id, categoryId).run();
    }
    return id;
  };
  const kettle = await type("Kettle", [appliances, kitchen]);
  const phone = await type("Phone", [electronics]);
  const battery = await type("Battery", [batteries, otherElectronics]);
  const unlinked = await type("Unlinked", []);

  const token = (await verifiedUser("alice")).tokens.access_token;
  for (const name of ["Kettle one", "Kettle two"]) {
    await createProduct(token, {
      name,
      product_type_id: kettle,
      components: [
        { name: "Cell", amount_in_parent: 1, product_type_id: battery },
        { name: "Lid", amount_in_parent: 1 },
      ],
    });
  }
  await createProduct(token, {
    name: "Phone",
    product_type_id: phone,
    components: [
      {
        name: "Pack",
        amount_in_parent: 1,
        product_type_id: battery,
        components: [{ name: "Cell", amount_in_parent: 2, product_type_id: battery }],
      },
    ],
  });
  await createProduct(token, { name: "Untyped" });
  await createProduct(token, { name: "Unlinked", product_type_id: unlinked });
});

describe("GET /v1/stats/categories", () => {
  it("ranks the categories of base products by default, ties by name, in one round trip", async () => {
    const { response, body } = await categories("");
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("x-cache")).toBe("miss");
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    expect(body.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(body).toMatchObject({
      limit: 10,
      scope: "products",
      categories: [
        { name: "Appliances", count: 2 },
        { name: "Kitchen", count: 2 },
        { name: "Electronics", count: 1 },
      ],
    });
  });

  it("counts components at every depth, or every record", async () => {
    expect((await categories("scope=components")).body.categories).toEqual([
      { name: "Batteries", count: 4 },
      { name: "Electronics", count: 4 },
    ]);
    // The two categories named Electronics stay apart.
    expect((await categories("scope=all")).body).toMatchObject({
      limit: 10,
      scope: "all",
      categories: [
        { name: "Batteries", count: 4 },
        { name: "Electronics", count: 4 },
        { name: "Appliances", count: 2 },
        { name: "Kitchen", count: 2 },
        { name: "Electronics", count: 1 },
      ],
    });
  });

  it("lists at most limit categories", async () => {
    expect((await categories("limit=1")).body).toMatchObject({ limit: 1, categories: [{ name: "Appliances", count: 2 }] });
    expect((await categories("limit=3&scope=all")).body.categories).toEqual([
      { name: "Batteries", count: 4 },
      { name: "Electronics", count: 4 },
      { name: "Appliances", count: 2 },
    ]);
    expect((await categories("limit=100&scope=all")).body.categories).toHaveLength(5);
  });

  it("answers a repeated request from the cache, without touching D1", async () => {
    const first = await categories("scope=components&limit=7");
    expect(first.response.headers.get("x-cache")).toBe("miss");
    const again = await categories("limit=7&scope=components");
    expect(again.response.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(again.response)).toBe(0);
    expect(again.body).toEqual(first.body);
  });

  it("refuses a bad limit or scope and unknown parameters with 422", async () => {
    for (const [query, pointer] of [
      ["limit=0", "#/query/limit"],
      ["limit=101", "#/query/limit"],
      ["limit=1.5", "#/query/limit"],
      ["limit=ten", "#/query/limit"],
      ["scope=parts", "#/query/scope"],
      ["scope=Products", "#/query/scope"],
      ["granularity=day", "#/query/granularity"],
    ] as const) {
      const problem = await expectProblem(await api(`/v1/stats/categories?${query}`), 422, "VALIDATION_FAILED");
      expect(
        problem.errors?.map((error) => error.pointer),
        query,
      ).toEqual([pointer]);
    }
  });
});
