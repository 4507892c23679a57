import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips, rowsRead } from "../../support/http";

// Values carry a per-run tag, so the filters below see only this file's products.
const tag = `t${Date.now().toString(36)}`;
const brand = (name: string) => `${tag}${name}`;
let alice: Awaited<ReturnType<typeof verifiedUser>>;
let bob: Awaited<ReturnType<typeof verifiedUser>>;
let typeName: string;

const create = async (token: string, body: Record<string, unknown>) => {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
};

beforeAll(async () => {
  [alice, bob] = [await verifiedUser("alice"), await verifiedUser("bob")];
  typeName = `Kettle ${tag}`;
  const type = await env.DB.prepare("INSERT INTO product_types (name) VALUES (?) RETURNING id").bind(typeName).first<{ id: number }>();
  const a = alice.tokens.access_token;
  await create(a, { name: `Acme kettle ${tag}`, brand: brand("ACME"), model: `${tag}-K1`, product_type_id: type!.id });
  // A component's brand and model count for suggestions, never for facets (base products only).
  await create(a, {
    name: `Acme toaster ${tag}`,
    brand: brand("acme"),
    model: `${tag}-T1`,
    components: [{ name: "Element", amount_in_parent: 1, brand: brand("cog"), model: `${tag}-K1` }],
  });
  await create(a, { name: `Bolt lamp ${tag}`, brand: brand("bolt"), model: `${tag}-K1` });
  await create(bob.tokens.access_token, { name: `Bolt fan ${tag}`, brand: brand("bolt"), model: null });
});

const ours = `brand[in]=${brand("acme")},${brand("bolt")},${brand("cog")}`;

describe("facets", () => {
  it("count the values of each requested field among the matching base products, in one round trip", async () => {
    const response = await api(`/v1/products/facets?fields=brand&fields=model&fields=product_type_name&${ours}`);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      brand: [
        { value: brand("acme"), count: 2 },
        { value: brand("bolt"), count: 2 },
      ],
      model: [
        { value: `${tag}-K1`, count: 2 },
        { value: `${tag}-T1`, count: 1 },
      ],
      product_type_name: [{ value: typeName, count: 1 }],
    });
  });

  it("answer only the fields asked for, under every filter of the list", async () => {
    const single = await api(`/v1/products/facets?fields=brand&${ours}&search=kettle`);
    expect(await single.json()).toEqual({ brand: [{ value: brand("acme"), count: 1 }] });
    const byType = await api(`/v1/products/facets?fields=model&product_type_name[in]=${encodeURIComponent(typeName.toUpperCase())}`);
    expect(await byType.json()).toEqual({ model: [{ value: `${tag}-K1`, count: 1 }] });
    const nothing = await api(`/v1/products/facets?fields=brand&fields=brand&brand[in]=${brand("nobody")}`);
    expect(await nothing.json()).toEqual({ brand: [] });
  });

  it("under a search count at most 1,000 matches, the most recently added, reading those and not every match", async () => {
    // 1,005 base products with one word; the five added first have a brand of their own.
    const word = `${tag}sampled`;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1005)
       INSERT INTO products (owner_id, name, brand, created_at, updated_at, parent_id, depth)
       SELECT ?1, 'Sampled ' || ?2 || ' ' || i, iif(i <= 5, ?3, ?4), 1790000000 + i, 1790000000 + i, NULL, 0 FROM n`,
    )
      .bind(alice.id, word, `first-${tag}`, `later-${tag}`)
      .run();
    const response = await api(`/v1/products/facets?fields=brand&search=${word}`);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ brand: [{ value: `later-${tag}`, count: 1000 }] });
    // The sample's index entries and rows, and their grouping: not the catalogue, not all 1,005 twice over.
    expect(rowsRead(response)).toBeLessThanOrEqual(4 * 1000 + 100);
  });

  it("owner=me counts the caller's own products and needs a signed-in user", async () => {
    await expectProblem(await api(`/v1/products/facets?fields=brand&owner=me`), 401, "AUTHENTICATION_REQUIRED");
    const mine = await api(`/v1/products/facets?fields=brand&owner=me&${ours}`, { headers: bearer(bob.tokens.access_token) });
    expect(mine.status).toBe(200);
    // The token check, then one batch of every field.
    expect(roundTrips(mine)).toBe(2);
    expect(await mine.json()).toEqual({ brand: [{ value: brand("bolt"), count: 1 }] });
  });

  it("refuse a missing or unknown field and unknown parameters with 422", async () => {
    for (const [query, pointer] of [
      ["", "#/query/fields"],
      ["fields=colour", "#/query/fields/0"],
      ["fields=brand&colour=red", "#/query/colour"],
    ] as const) {
      const problem = await expectProblem(await api(`/v1/products/facets?${query}`), 422, "VALIDATION_FAILED");
      expect(problem.errors?.map((e) => e.pointer)).toEqual([pointer]);
    }
  });
});

describe("suggestions", () => {
  interface Page {
    items: string[];
    total: number;
    page: number;
    size: number;
    pages: number;
  }

  it("page the distinct brands starting with the text, any case, components included, most used first", async () => {
    const response = await api(`/v1/products/suggestions/brands?search=${tag.toUpperCase()}`);
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(await response.json()).toEqual({
      items: [brand("acme"), brand("bolt"), brand("cog")],
      total: 3,
      total_relation: "eq",
      page: 1,
      size: 50,
      pages: 1,
    });

    const second = (await (await api(`/v1/products/suggestions/brands?search=${tag}&size=1&page=2`)).json()) as Page;
    expect(second).toEqual({ items: [brand("bolt")], total: 3, total_relation: "eq", page: 2, size: 1, pages: 3 });
    const past = (await (await api(`/v1/products/suggestions/brands?search=${tag}&size=2&page=3`)).json()) as Page;
    expect(past).toEqual({ items: [], total: 3, total_relation: "eq", page: 3, size: 2, pages: 2 });
    const narrow = (await (await api(`/v1/products/suggestions/brands?search=${brand("b")}`)).json()) as Page;
    expect(narrow.items).toEqual([brand("bolt")]);
  });

  it("suggest models the same way; wildcards are plain characters", async () => {
    const models = (await (await api(`/v1/products/suggestions/models?search=${tag.toUpperCase()}-`)).json()) as Page;
    // K1: two base products and the component; T1: one.
    expect(models).toMatchObject({ items: [`${tag}-K1`, `${tag}-T1`], total: 2 });
    const wildcard = (await (await api(`/v1/products/suggestions/models?search=${tag}%25`)).json()) as Page;
    expect(wildcard).toMatchObject({ items: [], total: 0, pages: 0 });
  });

  it("refuse bad paging and unknown parameters with 422; another kind is not a route", async () => {
    for (const query of ["size=0", "size=101", "page=0", "colour=red"]) {
      await expectProblem(await api(`/v1/products/suggestions/brands?${query}`), 422, "VALIDATION_FAILED");
    }
    expect((await api("/v1/products/suggestions/colours")).status).toBe(404);
  });
});
