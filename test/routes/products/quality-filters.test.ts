import { beforeAll, describe, expect, it } from "vitest";
import { bearer, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { createProduct, referenceRow } from "../../support/releases";

// Finding what needs work (decisions.md, Record quality): quality_score[lt], quality_score[ge] and
// quality_fail[in] in the product list, its export, its facets and a user's list, with every other
// filter and owner=me; bad values are 422s that say what is allowed.

type Page = { total: number; items: { id: number; name: string; quality_score: number }[] };

let ada: Awaited<ReturnType<typeof verifiedUser>>;
let bob: Awaited<ReturnType<typeof verifiedUser>>;
const brand = `qualitybrand${crypto.randomUUID().slice(0, 6)}`;
const ids: Record<string, number> = {};

beforeAll(async () => {
  [ada, bob] = [await verifiedUser("adaq"), await verifiedUser("bobq")];
  const steel = await referenceRow("materials", "Steel (filter test)");
  const kettles = await referenceRow("product_types", "Kettle (filter test)");
  const as = (who: typeof ada) => bearer(who.tokens.access_token);
  // Scores: all checks but has_image pass (7 of 8).
  ids.nearly = (
    await createProduct(as(ada), {
      name: "Nearly complete",
      brand,
      product_type_id: kettles,
      weight_g: 1000,
      height_cm: 10,
      width_cm: 10,
      depth_cm: 10,
      circularity_properties: { recyclability: "Steel" },
      bill_of_materials: [{ material_id: steel, quantity: 1, unit: "kg" }],
    })
  ).id;
  // Nothing set: 0 of 6.
  ids.bare = (await createProduct(as(ada), { name: "Bare", brand })).id;
  // A weight: 1 of 6.
  ids.weighed = (await createProduct(as(ada), { name: "Weighed", brand, weight_g: 20 })).id;
  // A weight and components that weigh twice as much: weight and breakdown pass, the balance fails (2 of 7).
  ids.unbalanced = (
    await createProduct(as(ada), {
      name: "Unbalanced",
      brand,
      weight_g: 100,
      components: [{ name: "Lump", amount_in_parent: 2, weight_g: 100 }],
    })
  ).id;
  ids.bobs = (await createProduct(as(bob), { name: "Bob's bare", brand })).id;
}, 30_000);

const names = (page: Page) => page.items.map((item) => item.name).sort();

async function list(query: string, headers: Record<string, string> = {}): Promise<Page> {
  const response = await api(`/v1/products?brand[in]=${brand}&${query}`, { headers });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Page;
}

describe("quality filters", () => {
  it("select by score range, in one round trip, with the scores in the items", async () => {
    const below = await api(`/v1/products?brand[in]=${brand}&quality_score[lt]=0.5`);
    expect(roundTrips(below)).toBe(1);
    const page = (await below.json()) as Page;
    expect(names(page)).toEqual(["Bare", "Bob's bare", "Unbalanced", "Weighed"]);
    expect(page.total).toBe(4);
    expect(Object.fromEntries(page.items.map((item) => [item.name, item.quality_score]))).toEqual({
      Bare: 0,
      "Bob's bare": 0,
      Weighed: 0.167,
      Unbalanced: 0.286,
    });
    expect(names(await list("quality_score[ge]=0.5"))).toEqual(["Nearly complete"]);
    expect(names(await list("quality_score[ge]=0.167&quality_score[lt]=0.875"))).toEqual(["Unbalanced", "Weighed"]);
    expect(names(await list("quality_score[ge]=0.875&quality_score[lt]=1"))).toEqual(["Nearly complete"]);
    // Nothing here has every check passing; 1 is the top of the range.
    expect((await list("quality_score[ge]=1")).total).toBe(0);
    expect((await list("quality_score[lt]=1")).total).toBe(5);
    expect((await list("quality_score[lt]=0")).total).toBe(0);
  });

  it("select records failing any of the named checks", async () => {
    expect(names(await list("quality_fail[in]=components_mass_balance"))).toEqual(["Unbalanced"]);
    expect(names(await list("quality_fail[in]=has_weight,components_mass_balance"))).toEqual(["Bare", "Bob's bare", "Unbalanced"]);
    expect((await list("quality_fail[in]=has_image")).total).toBe(5);
    // Not applicable is not failing: only the nearly complete product has what density needs, and it passes.
    expect((await list("quality_fail[in]=density_plausible,materials_mass_balance")).total).toBe(0);
    // Combined with a score bound, a name and an order.
    expect(names(await list("quality_fail[in]=has_product_type&quality_score[ge]=0.1"))).toEqual(["Unbalanced", "Weighed"]);
    const ordered = await list("quality_fail[in]=has_dimensions&name[ilike]=e&order_by=-name&size=2");
    expect(ordered.total).toBe(4);
    expect(ordered.items.map((item) => item.name)).toEqual(["Weighed", "Unbalanced"]);
  });

  it("combine with owner=me: a contributor finds their own records that need work", async () => {
    const mine = await api(`/v1/products?owner=me&quality_score[lt]=1&order_by=name`, { headers: bearer(ada.tokens.access_token) });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as Page).items.map((item) => item.name)).toEqual(["Bare", "Nearly complete", "Unbalanced", "Weighed"]);
    const bobs = await list("owner=me&quality_fail[in]=has_weight", bearer(bob.tokens.access_token));
    expect(names(bobs)).toEqual(["Bob's bare"]);
    await expectProblem(await api("/v1/products?owner=me&quality_score[lt]=1"), 401, "AUTHENTICATION_REQUIRED");
    // A user's public list takes them too.
    const users = await api(`/v1/users/${ada.id}/products?quality_fail[in]=has_weight`);
    expect(users.status, await users.clone().text()).toBe(200);
    expect(names((await users.json()) as Page)).toEqual(["Bare"]);
  });

  it("apply to the list export and the facets", async () => {
    const exported = await api(`/v1/products/export?format=json&brand[in]=${brand}&quality_score[lt]=0.2`);
    expect(exported.status, await exported.clone().text()).toBe(200);
    const trees = (await exported.json()) as { id: number; name: string; quality_score: number }[];
    expect(trees.map((tree) => tree.name).sort()).toEqual(["Bare", "Bob's bare", "Weighed"]);
    expect(trees.find((tree) => tree.id === ids.weighed)!.quality_score).toBe(0.167);
    const csv = await (await api(`/v1/products/export?brand[in]=${brand}&quality_fail[in]=components_mass_balance`)).text();
    // The header and the product with its one component.
    expect(csv.trim().split("\r\n")).toHaveLength(3);
    const facets = await api(`/v1/products/facets?fields=brand&brand[in]=${brand}&quality_fail[in]=has_weight`);
    expect(((await facets.json()) as { brand: { value: string; count: number }[] }).brand).toEqual([{ value: brand, count: 2 }]);
  });

  it("refuse bad values with 422 at the parameter", async () => {
    const bad = async (query: string, pointer: string) => {
      const problem = await expectProblem(await api(`/v1/products?${query}`), 422, "VALIDATION_FAILED");
      expect(problem.errors?.map((error) => error.pointer)).toEqual([pointer]);
      return problem.errors![0]!.detail;
    };
    for (const value of ["1.5", "-0.1", "abc", "1e-1", "", "0x1"]) await bad(`quality_score[lt]=${value}`, "#/query/quality_score[lt]");
    await bad("quality_score[ge]=2", "#/query/quality_score[ge]");
    expect(await bad("quality_fail[in]=has_weight,has_colour", "#/query/quality_fail[in]")).toContain('"has_colour"');
    await bad("quality_fail[in]=,", "#/query/quality_fail[in]");
  });
});
