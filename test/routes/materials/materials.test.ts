import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, expectProblem, roundTrips } from "../../support/http";
import { pointers, readUntilHit, seedTaxonomy } from "../../support/reference";

type Material = {
  id: number;
  name: string;
  description: string | null;
  density_kg_m3: number | null;
  is_crm: boolean;
  created_at: string;
  updated_at: string;
};
type Page = { items: Material[]; total: number; page: number; size: number; pages: number };

const id: Record<string, number> = {};
let category: Record<string, number>;
let taxonomyId: number;

// Seeded with SQL, not the admin routes: this file is about reads and needs fixed creation times.
beforeAll(async () => {
  ({ taxonomyId, category } = await seedTaxonomy({ name: "Materials", version: "1", domains: ["materials"] }, [
    "Metals",
    "Critical",
    "Polymers",
    "Empty",
  ]));
  const seed: [string, number | null, number, number, string[]][] = [
    ["Steel", 7850, 0, 1000, ["Metals"]],
    ["aluminium", 2700, 0, 2000, ["Metals"]],
    ["Cobalt", 8900, 1, 3000, ["Metals", "Critical"]],
    ["Polypropylene", 905, 0, 4000, ["Polymers"]],
    ["Mystery 100%_blend", null, 0, 5000, []],
    ["Gallium", 5910, 1, 6000, ["Critical"]],
  ];
  for (const [name, density, crm, at, links] of seed) {
    const row = await env.DB.prepare(
      "INSERT INTO materials (name, description, density_kg_m3, is_crm, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
    )
      .bind(name, `About ${name}`, density, crm, at, at + 1)
      .first<{ id: number }>();
    id[name] = row!.id;
    for (const link of links)
      await env.DB.prepare("INSERT INTO material_categories (material_id, category_id) VALUES (?, ?)").bind(row!.id, category[link]).run();
  }
});

const names = async (response: Response) => {
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as Page).items.map((item) => item.name);
};
const list = async (query: string) => names(await api(`/v1/materials?${query}`));

describe("GET /v1/materials", () => {
  it("pages all materials by name (any case), without categories, in one round trip", async () => {
    const response = await api("/v1/materials");
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("x-cache")).toBe("miss");
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    const body = (await response.json()) as Page;
    expect(body).toMatchObject({ total: 6, page: 1, size: 50, pages: 1 });
    expect(body.items.map((item) => item.name)).toEqual(["aluminium", "Cobalt", "Gallium", "Mystery 100%_blend", "Polypropylene", "Steel"]);
    expect(body.items[1]).toEqual({
      id: id.Cobalt,
      name: "Cobalt",
      description: "About Cobalt",
      density_kg_m3: 8900,
      is_crm: true,
      created_at: "1970-01-01T00:50:00Z",
      updated_at: "1970-01-01T00:50:01Z",
    });
  });

  it("filters by a case-insensitive name substring, with % and _ as plain characters", async () => {
    expect(await list("name[ilike]=AL")).toEqual(["aluminium", "Cobalt", "Gallium"]);
    expect(await list("name[ilike]=%25")).toEqual(["Mystery 100%_blend"]);
    expect(await list("name[ilike]=_")).toEqual(["Mystery 100%_blend"]);
    expect(await list("name[ilike]=nothing")).toEqual([]);
    expect(await pointers(await api("/v1/materials?name[ilike]="))).toEqual(["#/query/name[ilike]"]);
  });

  it("filters by the critical-raw-material flag", async () => {
    expect(await list("is_crm=true")).toEqual(["Cobalt", "Gallium"]);
    expect(await list("is_crm=false")).toEqual(["aluminium", "Mystery 100%_blend", "Polypropylene", "Steel"]);
    expect(await pointers(await api("/v1/materials?is_crm=yes"))).toEqual(["#/query/is_crm"]);
  });

  it("filters by a density range, inclusive; unknown densities never match", async () => {
    expect(await list("density_kg_m3[ge]=2700&density_kg_m3[le]=7850")).toEqual(["aluminium", "Gallium", "Steel"]);
    expect(await list("density_kg_m3[ge]=8000")).toEqual(["Cobalt"]);
    expect(await list("density_kg_m3[le]=905.5")).toEqual(["Polypropylene"]);
    expect(await list("density_kg_m3[ge]=0")).toHaveLength(5);
    for (const bad of ["-5", "1e3", "", "abc"]) {
      expect(await pointers(await api(`/v1/materials?density_kg_m3[ge]=${bad}`))).toEqual(["#/query/density_kg_m3[ge]"]);
    }
  });

  it("filters by a linked category, the category itself only", async () => {
    expect(await list(`category_id=${category.Metals}`)).toEqual(["aluminium", "Cobalt", "Steel"]);
    expect(await list(`category_id=${category.Critical}`)).toEqual(["Cobalt", "Gallium"]);
    expect(await list(`category_id=${category.Empty}`)).toEqual([]);
    expect(await list("category_id=999999")).toEqual([]);
    expect(await list(`category_id=${category.Metals}&is_crm=false&name[ilike]=e`)).toEqual(["Steel"]);
    for (const bad of ["abc", "0", "-1", "1.5"])
      expect(await pointers(await api(`/v1/materials?category_id=${bad}`))).toEqual(["#/query/category_id"]);
  });

  it("orders by name, id, density (unknown last either way) or creation, with id breaking ties", async () => {
    expect(await list("order_by=-density_kg_m3")).toEqual([
      "Cobalt",
      "Steel",
      "Gallium",
      "aluminium",
      "Polypropylene",
      "Mystery 100%_blend",
    ]);
    expect(await list("order_by=%2Bdensity_kg_m3")).toEqual([
      "Polypropylene",
      "aluminium",
      "Gallium",
      "Steel",
      "Cobalt",
      "Mystery 100%_blend",
    ]);
    // An unencoded + arrives as a space.
    expect(await list("order_by=+density_kg_m3")).toEqual(await list("order_by=density_kg_m3"));
    expect(await list("order_by=-created_at")).toEqual(["Gallium", "Mystery 100%_blend", "Polypropylene", "Cobalt", "aluminium", "Steel"]);
    expect(await list("order_by=-name")).toEqual(["Steel", "Polypropylene", "Mystery 100%_blend", "Gallium", "Cobalt", "aluminium"]);
    const byId = Object.entries(id)
      .sort(([, a], [, b]) => b - a)
      .map(([name]) => name);
    expect(await list("order_by=-id")).toEqual(byId);
    expect(await pointers(await api("/v1/materials?order_by=-is_crm,name"))).toEqual(["#/query/order_by"]);
    expect(await pointers(await api("/v1/materials?order_by=weight"))).toEqual(["#/query/order_by"]);
    expect(await pointers(await api("/v1/materials?order_by=name,-name"))).toEqual(["#/query/order_by"]);
  });

  it("pages with page and size; past the last page is an empty page", async () => {
    const response = await api("/v1/materials?size=4&page=2");
    expect((await response.json()) as Page).toMatchObject({
      total: 6,
      page: 2,
      size: 4,
      pages: 2,
      items: [{ name: "Polypropylene" }, { name: "Steel" }],
    });
    const past = (await (await api("/v1/materials?size=4&page=3")).json()) as Page;
    expect(past).toMatchObject({ total: 6, page: 3, items: [] });
    expect(await pointers(await api("/v1/materials?size=0"))).toEqual(["#/query/size"]);
    expect(await pointers(await api("/v1/materials?size=101"))).toEqual(["#/query/size"]);
    expect(await pointers(await api("/v1/materials?page=0"))).toEqual(["#/query/page"]);
  });

  it("refuses unknown parameters with 422", async () => {
    expect(await pointers(await api("/v1/materials?density=5"))).toEqual(["#/query/density"]);
    expect(await pointers(await api("/v1/materials?name[like]=a"))).toEqual(["#/query/name[like]"]);
  });
});

describe("GET /v1/materials/{id}", () => {
  it("answers the material with its categories by name, in one round trip", async () => {
    const response = await api(`/v1/materials/${id.Cobalt}`);
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(await response.json()).toEqual({
      id: id.Cobalt,
      name: "Cobalt",
      description: "About Cobalt",
      density_kg_m3: 8900,
      is_crm: true,
      categories: [
        { id: category.Critical, name: "Critical", taxonomy_id: taxonomyId },
        { id: category.Metals, name: "Metals", taxonomy_id: taxonomyId },
      ],
      created_at: "1970-01-01T00:50:00Z",
      updated_at: "1970-01-01T00:50:01Z",
    });
    const mystery = (await (await api(`/v1/materials/${id["Mystery 100%_blend"]}`)).json()) as Material & { categories: unknown[] };
    expect(mystery).toMatchObject({ density_kg_m3: null, is_crm: false, categories: [] });
  });

  it("answers 404 MATERIAL_NOT_FOUND for an unknown id, 422 for a malformed one or any query parameter", async () => {
    await expectProblem(await api("/v1/materials/999999"), 404, "MATERIAL_NOT_FOUND");
    expect(await pointers(await api("/v1/materials/abc"))).toEqual(["#/path/id"]);
    expect(await pointers(await api(`/v1/materials/${id.Steel}?x=1`))).toEqual(["#/query/x"]);
  });
});

describe("caching", () => {
  it("serves a repeat read from KV, without D1", async () => {
    for (const path of [`/v1/materials/${id.Gallium}`, "/v1/materials?is_crm=true&size=5", "/v1/materials?size=5&is_crm=true"]) {
      const first = await api(path);
      expect(first.status).toBe(200);
      const body = await first.json();
      const again = await readUntilHit(path);
      expect(roundTrips(again)).toBe(0);
      expect(again.headers.get("cache-control")).toBe("public, max-age=60");
      expect(await again.json()).toEqual(body);
    }
  });

  it("never caches refusals", async () => {
    await api("/v1/materials/999998");
    const again = await api("/v1/materials/999998");
    expect(again.headers.get("x-cache")).toBe("miss");
    await expectProblem(again, 404, "MATERIAL_NOT_FOUND");
  });
});
