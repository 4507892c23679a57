import { beforeAll, describe, expect, it } from "vitest";
import { api, expectProblem, roundTrips } from "../../support/http";
import { type Category, type CategoryNode, newCategory, newTaxonomy, type Page, read, readUntilHit, shape } from "../../support/reference";

/**
 * One taxonomy:
 *   Alpha -> Alpha 1 -> Alpha 1a -> Alpha 1a-i -> Alpha 1a-i-x
 *                    -> Alpha 1b
 *         -> Alpha 2
 *   Beta  -> Beta 1
 *   gamma (lower case: names sort without regard to case)
 */
interface Fixture {
  taxonomy: number;
  other: number;
  ids: Record<string, number>;
}

let fixture: Fixture;

beforeAll(async () => {
  const taxonomy = (await newTaxonomy()).id;
  const other = (await newTaxonomy()).id;
  const ids: Record<string, number> = {};
  const add = async (name: string, parent: string | null, extra: Record<string, unknown> = {}) => {
    const placement = parent === null ? { taxonomy_id: taxonomy } : { supercategory_id: ids[parent] };
    ids[name] = (await newCategory({ name, ...placement, ...extra })).id;
  };
  await add("gamma", null);
  await add("Beta", null, { external_id: "B" });
  await add("Alpha", null, { description: "First", external_id: "A" });
  await add("Alpha 2", "Alpha");
  await add("Alpha 1", "Alpha");
  await add("Alpha 1b", "Alpha 1");
  await add("Alpha 1a", "Alpha 1");
  await add("Alpha 1a-i", "Alpha 1a");
  await add("Alpha 1a-i-x", "Alpha 1a-i");
  await add("Beta 1", "Beta", { external_id: "B1" });
  ids.Other = (await newCategory({ name: "Other root", taxonomy_id: other, external_id: "B" })).id;
  fixture = { taxonomy, other, ids };
});

describe("GET /v1/categories", () => {
  it("filters by taxonomy, level, supercategory, external id and name, ordered by name in any case", async () => {
    const { taxonomy, ids } = fixture;
    const all = await read<Page<Category>>(`/v1/categories?taxonomy_id=${taxonomy}&size=100`);
    expect(all.total).toBe(10);
    expect(all.items.map((c) => c.name)).toEqual([
      "Alpha",
      "Alpha 1",
      "Alpha 1a",
      "Alpha 1a-i",
      "Alpha 1a-i-x",
      "Alpha 1b",
      "Alpha 2",
      "Beta",
      "Beta 1",
      "gamma",
    ]);
    expect(all.items[0]).toEqual({
      id: ids.Alpha,
      name: "Alpha",
      description: "First",
      external_id: "A",
      taxonomy_id: taxonomy,
      supercategory_id: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });

    const roots = await read<Page<Category>>(`/v1/categories?taxonomy_id=${taxonomy}&is_root=true`);
    expect(roots.items.map((c) => c.name)).toEqual(["Alpha", "Beta", "gamma"]);
    const below = await read<Page<Category>>(`/v1/categories?taxonomy_id=${taxonomy}&is_root=false`);
    expect(below.total).toBe(7);
    const children = await read<Page<Category>>(`/v1/categories?supercategory_id=${ids["Alpha 1"]}`);
    expect(children.items.map((c) => c.name)).toEqual(["Alpha 1a", "Alpha 1b"]);
    // external ids are unique per taxonomy only: "B" is in both.
    const external = await read<Page<Category>>("/v1/categories?external_id=B");
    expect(external.items.map((c) => c.id).sort()).toEqual([ids.Beta, ids.Other].sort());
    const named = await read<Page<Category>>(`/v1/categories?taxonomy_id=${taxonomy}&name[ilike]=A%201A`);
    expect(named.items.map((c) => c.name)).toEqual(["Alpha 1a", "Alpha 1a-i", "Alpha 1a-i-x"]);
    const descending = await read<Page<Category>>(`/v1/categories?taxonomy_id=${taxonomy}&is_root=true&order_by=-name`);
    expect(descending.items.map((c) => c.name)).toEqual(["gamma", "Beta", "Alpha"]);
    const byId = await read<Page<Category>>(`/v1/categories?taxonomy_id=${taxonomy}&is_root=true&order_by=%2Bid`);
    expect(byId.items.map((c) => c.name)).toEqual(["gamma", "Beta", "Alpha"]);
  });

  it("pages, with the page and its count in one round trip", async () => {
    const response = await api(`/v1/categories?taxonomy_id=${fixture.taxonomy}&size=4&page=3`);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("x-cache")).toBe("miss");
    const page = (await response.json()) as Page<Category>;
    expect(page).toMatchObject({ total: 10, page: 3, size: 4, pages: 3 });
    expect(page.items.map((c) => c.name)).toEqual(["Beta 1", "gamma"]);
    const past = await read<Page<Category>>(`/v1/categories?taxonomy_id=${fixture.taxonomy}&size=4&page=9`);
    expect(past).toMatchObject({ items: [], total: 10, page: 9 });
  });

  it("refuses unknown and malformed parameters with 422", async () => {
    for (const query of [
      "colour=red",
      "is_root=yes",
      "taxonomy_id=abc",
      "taxonomy_id=0",
      "order_by=version",
      "order_by=name,-name",
      "size=101",
      "page=0",
      "name[ilike]=",
    ]) {
      const problem = await expectProblem(await api(`/v1/categories?${query}`), 422, "VALIDATION_FAILED");
      expect(problem.errors?.[0]?.pointer).toMatch(/^#\/query\//);
    }
  });
});

describe("GET /v1/categories/{id}", () => {
  it("embeds the taxonomy, the supercategory and the direct subcategories by name", async () => {
    const { taxonomy, ids } = fixture;
    const taxonomyName = (await read<{ name: string }>(`/v1/taxonomies/${taxonomy}`)).name;
    const response = await api(`/v1/categories/${ids["Alpha 1"]}`);
    expect(roundTrips(response)).toBe(1);
    expect(await response.json()).toMatchObject({
      id: ids["Alpha 1"],
      name: "Alpha 1",
      supercategory_id: ids.Alpha,
      taxonomy: { id: taxonomy, name: taxonomyName },
      supercategory: { id: ids.Alpha, name: "Alpha" },
      subcategories: [
        { id: ids["Alpha 1a"], name: "Alpha 1a" },
        { id: ids["Alpha 1b"], name: "Alpha 1b" },
      ],
    });
    const root = await read<{ supercategory: unknown; subcategories: unknown[] }>(`/v1/categories/${ids.gamma}`);
    expect(root).toMatchObject({ supercategory: null, subcategories: [] });
  });

  it("answers 404 CATEGORY_NOT_FOUND for an unknown id and 422 for a malformed one", async () => {
    await expectProblem(await api("/v1/categories/999999"), 404, "CATEGORY_NOT_FOUND");
    await expectProblem(await api("/v1/categories/999999/subcategories"), 404, "CATEGORY_NOT_FOUND");
    await expectProblem(await api("/v1/categories/999999/subcategories/tree"), 404, "CATEGORY_NOT_FOUND");
    await expectProblem(await api("/v1/categories/abc"), 422, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/categories/0"), 422, "VALIDATION_FAILED");
  });
});

describe("GET /v1/categories/{id}/subcategories", () => {
  it("pages the direct subcategories only, and takes no taxonomy or level filters", async () => {
    const { ids } = fixture;
    const page = await read<Page<Category>>(`/v1/categories/${ids.Alpha}/subcategories?size=1&page=2`);
    expect(page).toMatchObject({ total: 2, page: 2, size: 1, pages: 2 });
    expect(page.items.map((c) => c.name)).toEqual(["Alpha 2"]);
    expect((await read<Page<Category>>(`/v1/categories/${ids.gamma}/subcategories`)).total).toBe(0);
    for (const query of ["taxonomy_id=1", "is_root=true", "supercategory_id=1"]) {
      await expectProblem(await api(`/v1/categories/${ids.Alpha}/subcategories?${query}`), 422, "VALIDATION_FAILED");
    }
  });
});

describe("category trees", () => {
  it("nests the top level down to recursion_depth (default 1: direct subcategories with `subcategories: []`)", async () => {
    const path = `/v1/taxonomies/${fixture.taxonomy}/categories/tree`;
    const one = await read<Page<CategoryNode>>(path);
    expect(one).toMatchObject({ total: 3, page: 1, size: 50, pages: 1 });
    expect(shape(one.items)).toEqual({ Alpha: { "Alpha 1": {}, "Alpha 2": {} }, Beta: { "Beta 1": {} }, gamma: {} });
    expect(one.items.map((n) => n.name)).toEqual(["Alpha", "Beta", "gamma"]);
    expect(one.items[0]).toEqual({
      id: fixture.ids.Alpha,
      name: "Alpha",
      description: "First",
      external_id: "A",
      taxonomy_id: fixture.taxonomy,
      subcategories: [
        {
          id: fixture.ids["Alpha 1"],
          name: "Alpha 1",
          description: null,
          external_id: null,
          taxonomy_id: fixture.taxonomy,
          subcategories: [],
        },
        {
          id: fixture.ids["Alpha 2"],
          name: "Alpha 2",
          description: null,
          external_id: null,
          taxonomy_id: fixture.taxonomy,
          subcategories: [],
        },
      ],
    });

    const two = await read<Page<CategoryNode>>(`${path}?recursion_depth=2`);
    expect(shape(two.items)).toEqual({
      Alpha: { "Alpha 1": { "Alpha 1a": {}, "Alpha 1b": {} }, "Alpha 2": {} },
      Beta: { "Beta 1": {} },
      gamma: {},
    });
    expect(two.items[0]!.subcategories[0]!.subcategories.map((n) => n.name)).toEqual(["Alpha 1a", "Alpha 1b"]);

    const three = await read<Page<CategoryNode>>(`${path}?recursion_depth=3`);
    expect(shape(three.items).Alpha).toEqual({ "Alpha 1": { "Alpha 1a": { "Alpha 1a-i": {} }, "Alpha 1b": {} }, "Alpha 2": {} });
    const five = await read<Page<CategoryNode>>(`${path}?recursion_depth=5`);
    expect(shape(five.items).Alpha).toEqual({
      "Alpha 1": { "Alpha 1a": { "Alpha 1a-i": { "Alpha 1a-i-x": {} } }, "Alpha 1b": {} },
      "Alpha 2": {},
    });
  });

  it("costs one round trip for an uncached page, and a cached repeat none", async () => {
    const path = `/v1/taxonomies/${fixture.taxonomy}/categories/tree?recursion_depth=4&size=2`;
    const first = await api(path);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-cache")).toBe("miss");
    expect(roundTrips(first)).toBe(1);
    expect(first.headers.get("cache-control")).toBe("public, max-age=60");
    const body = await first.json();
    const again = await readUntilHit(path);
    expect(roundTrips(again)).toBe(0);
    expect(again.headers.get("cache-control")).toBe("public, max-age=60");
    expect(await again.json()).toEqual(body);
  });

  it("pages through the top level; total counts the top level only", async () => {
    const path = `/v1/taxonomies/${fixture.taxonomy}/categories/tree?size=2`;
    const first = await read<Page<CategoryNode>>(path);
    expect(first).toMatchObject({ total: 3, page: 1, size: 2, pages: 2 });
    expect(shape(first.items)).toEqual({ Alpha: { "Alpha 1": {}, "Alpha 2": {} }, Beta: { "Beta 1": {} } });
    const second = await read<Page<CategoryNode>>(`${path}&page=2`);
    expect(shape(second.items)).toEqual({ gamma: {} });
    expect((await read<Page<CategoryNode>>(`${path}&page=3`)).items).toEqual([]);
  });

  it("reads the tree below one category, and the trees of every taxonomy or of the one taxonomy_id names", async () => {
    const { ids, taxonomy, other } = fixture;
    const below = await read<Page<CategoryNode>>(`/v1/categories/${ids.Alpha}/subcategories/tree?recursion_depth=2`);
    expect(below.total).toBe(2);
    expect(shape(below.items)).toEqual({ "Alpha 1": { "Alpha 1a": { "Alpha 1a-i": {} }, "Alpha 1b": {} }, "Alpha 2": {} });
    const leaf = await read<Page<CategoryNode>>(`/v1/categories/${ids["Alpha 1b"]}/subcategories/tree`);
    expect(leaf).toMatchObject({ items: [], total: 0 });

    const narrowed = await read<Page<CategoryNode>>(`/v1/categories/tree?taxonomy_id=${taxonomy}`);
    expect(shape(narrowed.items)).toEqual({ Alpha: { "Alpha 1": {}, "Alpha 2": {} }, Beta: { "Beta 1": {} }, gamma: {} });
    const everything = await read<Page<CategoryNode>>("/v1/categories/tree?size=100");
    const tops = everything.items.map((n) => n.id);
    expect(tops).toEqual(expect.arrayContaining([ids.Alpha, ids.Beta, ids.gamma, ids.Other]));
    expect(tops).not.toContain(ids["Alpha 1"]);
    expect(everything.items.find((n) => n.id === ids.Other)?.taxonomy_id).toBe(other);
    expect(await read<Page<CategoryNode>>("/v1/categories/tree?taxonomy_id=999999")).toMatchObject({ items: [], total: 0, pages: 0 });
  });

  it("refuses a depth outside 1..5 and unknown parameters with 422, and unknown parents with 404", async () => {
    const { taxonomy, ids } = fixture;
    for (const path of [
      `/v1/taxonomies/${taxonomy}/categories/tree?recursion_depth=6`,
      `/v1/taxonomies/${taxonomy}/categories/tree?recursion_depth=0`,
      `/v1/categories/tree?recursion_depth=6`,
      `/v1/categories/${ids.Alpha}/subcategories/tree?recursion_depth=6`,
      `/v1/categories/tree?depth=2`,
      `/v1/taxonomies/${taxonomy}/categories/tree?taxonomy_id=${taxonomy}`,
      `/v1/categories/${ids.Alpha}/subcategories/tree?size=0`,
    ]) {
      const problem = await expectProblem(await api(path), 422, "VALIDATION_FAILED");
      expect(problem.errors?.[0]?.pointer).toMatch(/^#\/query\//);
    }
    await expectProblem(await api("/v1/taxonomies/999999/categories/tree"), 404, "TAXONOMY_NOT_FOUND");
    await expectProblem(await api("/v1/categories/999999/subcategories/tree?recursion_depth=3"), 404, "CATEGORY_NOT_FOUND");
  });
});
