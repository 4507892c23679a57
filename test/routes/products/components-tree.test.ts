import { env } from "cloudflare:workers";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import type { SessionUser } from "../../../src/auth/session-user";
import { createDb } from "../../../src/db/client";
import { toComponentSummary } from "../../../src/routes/products/products.mappers";
import {
  componentTreeStatements,
  componentTreeSummaryStatements,
  nestRows,
  readComponentTree,
} from "../../../src/services/products/component-tree";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

interface Node {
  id: number;
  name: string;
  parent_id: number;
  owner_id: number | null;
  owner_username: string | null;
  components: Node[];
}

interface Page {
  items: { id: number; name: string; parent_id: number }[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

const create = async (token: string, body: unknown, path = "/v1/products") => {
  const response = await postJson(path, body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: number; components: { id: number; name: string }[] };
};

const leaf = (name: string) => ({ name, amount_in_parent: 1 });
const withChildren = (name: string, count: number) => ({
  ...leaf(name),
  components: Array.from({ length: count }, (_, i) => leaf(`${name}.${i + 1}`)),
});

function chain(levels: number): Record<string, unknown> {
  return levels === 1 ? leaf("Level 1") : { ...leaf(`Level ${levels}`), components: [chain(levels - 1)] };
}

const tree = (path: string, init?: RequestInit) => api(path, init);

async function treeBody(path: string, init?: RequestInit): Promise<Node[]> {
  const response = await tree(path, init);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Node[];
}

/** Every node of a tree answer, depth first, with its level (1: direct). */
function flatten(nodes: Node[], level = 1): { node: Node; level: number }[] {
  return nodes.flatMap((node) => [{ node, level }, ...flatten(node.components, level + 1)]);
}

/** Each node's `parent_id` names the node it is nested in, and siblings are ordered by id. */
function expectWellNested(rootId: number, nodes: Node[]): void {
  expect(nodes.map((n) => n.parent_id)).toEqual(nodes.map(() => rootId));
  expect(nodes.map((n) => n.id)).toEqual(nodes.map((n) => n.id).sort((a, b) => a - b));
  for (const node of nodes) expectWellNested(node.id, node.components);
}

describe("direct components", () => {
  it("pages the components directly under a product or a component, ordered by id, in one round trip", async () => {
    const user = await verifiedUser("pager");
    const product = await create(user.tokens.access_token, {
      name: "Drill",
      components: [withChildren("Motor", 3), leaf("Chuck"), leaf("Battery"), leaf("Trigger"), leaf("Housing")],
    });
    const ids = product.components.map((c) => c.id).sort((a, b) => a - b);

    const response = await api(`/v1/products/${product.id}/components?page=2&size=2`);
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const page = (await response.json()) as Page;
    expect(page).toMatchObject({ total: 5, page: 2, size: 2, pages: 3 });
    expect(page.items.map((c) => c.id)).toEqual(ids.slice(2, 4));
    expect(page.items.every((c) => c.parent_id === product.id)).toBe(true);

    const whole = (await (await api(`/v1/products/${product.id}/components`)).json()) as Page;
    expect(whole).toMatchObject({ total: 5, page: 1, size: 50, pages: 1 });
    expect(whole.items.map((c) => c.name)).toEqual(["Motor", "Chuck", "Battery", "Trigger", "Housing"]);
    const past = (await (await api(`/v1/products/${product.id}/components?page=4&size=2`)).json()) as Page;
    expect(past).toMatchObject({ items: [], total: 5, pages: 3 });

    const motor = ids[0]!;
    const subs = await api(`/v1/components/${motor}/components`, { headers: bearer(user.tokens.access_token) });
    // The token check travels in the read's batch.
    expect(roundTrips(subs)).toBe(1);
    expect(((await subs.json()) as Page).items.map((c) => c.name)).toEqual(["Motor.1", "Motor.2", "Motor.3"]);
    const none = (await (await api(`/v1/components/${ids[1]}/components`)).json()) as Page;
    expect(none).toMatchObject({ items: [], total: 0, pages: 0 });
  });

  it("answers 404 for the other kind and for unknown ids, 422 for bad paging", async () => {
    const user = await verifiedUser("pager");
    const product = await create(user.tokens.access_token, { name: "Sander", components: [leaf("Pad")] });
    const pad = product.components[0]!.id;
    await expectProblem(await api(`/v1/products/${pad}/components`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/components/${product.id}/components`), 404, "NOT_FOUND");
    await expectProblem(await api("/v1/products/999999999/components"), 404, "NOT_FOUND");
    for (const query of ["size=101", "page=0", "colour=red"]) {
      await expectProblem(await api(`/v1/products/${product.id}/components?${query}`), 422, "VALIDATION_FAILED");
    }
  });
});

describe("the component tree", () => {
  it("nests components down to recursion_depth (default 1), children ordered by id, in one round trip", async () => {
    const user = await verifiedUser("tree");
    const product = await create(user.tokens.access_token, { name: "Vacuum", components: [chain(10), withChildren("Brush", 2)] });
    const path = `/v1/products/${product.id}/components/tree`;

    const first = await tree(path);
    expect(first.status).toBe(200);
    expect(roundTrips(first)).toBe(1);
    const shallow = (await first.json()) as Node[];
    expect(shallow.map((n) => [n.name, n.components])).toEqual([
      ["Level 10", []],
      ["Brush", []],
    ]);
    expect(await treeBody(`${path}?recursion_depth=1`)).toEqual(shallow);

    const two = await treeBody(`${path}?recursion_depth=2`);
    expectWellNested(product.id, two);
    expect(flatten(two).map(({ node, level }) => [node.name, level])).toEqual([
      ["Level 10", 1],
      ["Level 9", 2],
      ["Brush", 1],
      ["Brush.1", 2],
      ["Brush.2", 2],
    ]);
    expect(two[0]!.components[0]!.components).toEqual([]);

    const all = await treeBody(`${path}?recursion_depth=10`);
    expectWellNested(product.id, all);
    const flat = flatten(all);
    expect(flat).toHaveLength(13);
    expect(flat.find(({ node }) => node.name === "Level 1")?.level).toBe(10);

    // Below a component the depth counts from the component.
    const top = all[0]!.id;
    const below = await treeBody(`/v1/components/${top}/components/tree?recursion_depth=10`);
    expectWellNested(top, below);
    expect(flatten(below).map(({ node }) => node.name)).toEqual(Array.from({ length: 9 }, (_, i) => `Level ${9 - i}`));
    const three = await treeBody(`/v1/components/${top}/components/tree?recursion_depth=3`);
    expect(flatten(three).map(({ level }) => level)).toEqual([1, 2, 3]);
  });

  it("refuses recursion_depth outside 1..10 with 422, and the other kind or unknown ids with 404", async () => {
    const user = await verifiedUser("tree");
    const product = await create(user.tokens.access_token, { name: "Mixer", components: [withChildren("Bowl", 1)] });
    const bowl = product.components[0]!.id;
    for (const depth of ["0", "11", "two", "1.5", ""]) {
      const problem = await expectProblem(
        await tree(`/v1/products/${product.id}/components/tree?recursion_depth=${depth}`),
        422,
        "VALIDATION_FAILED",
      );
      expect(problem.errors?.map((e) => e.pointer)).toEqual(["#/query/recursion_depth"]);
    }
    await expectProblem(await tree(`/v1/products/${bowl}/components/tree`), 404, "NOT_FOUND");
    await expectProblem(await tree(`/v1/components/${product.id}/components/tree`), 404, "NOT_FOUND");
    await expectProblem(await tree("/v1/components/999999999/components/tree"), 404, "NOT_FOUND");
    expect((await treeBody(`/v1/components/${bowl}/components/tree`)).map((n) => n.name)).toEqual(["Bowl.1"]);
  });

  it("answers exactly 1,000 components and refuses 1,001 with 400 COMPONENT_TREE_TOO_LARGE", async () => {
    const user = await verifiedUser("big");
    const token = user.tokens.access_token;
    // 10 top-level components with 90 children each: 910 in one create; then 1 + 89 more: 1,000.
    const product = await create(token, {
      name: "Printer",
      components: Array.from({ length: 10 }, (_, i) => withChildren(`Module ${i + 1}`, 90)),
    });
    await create(token, withChildren("Module 11", 89), `/v1/products/${product.id}/components`);
    const path = `/v1/products/${product.id}/components/tree`;

    const full = await tree(`${path}?recursion_depth=10`);
    expect(full.status).toBe(200);
    expect(roundTrips(full)).toBe(1);
    const nodes = (await full.json()) as Node[];
    expect(flatten(nodes)).toHaveLength(1000);
    expectWellNested(product.id, nodes);
    expect(nodes.map((n) => n.components.length)).toEqual([...Array<number>(10).fill(90), 89]);

    await create(token, leaf("Module 12"), `/v1/products/${product.id}/components`);
    for (const depth of [2, 10]) {
      const refused = await tree(`${path}?recursion_depth=${depth}`);
      // The depth-10 tree was cached before the last create, but the depth-2 read has just seen the
      // record's new generation in this isolate: the copy is known stale and the tree read at once.
      expect(roundTrips(refused)).toBe(1);
      const problem = await expectProblem(refused, 400, "COMPONENT_TREE_TOO_LARGE");
      expect(problem.detail).toMatch(/1000 components/);
      expect(problem.detail).toMatch(/recursion_depth/);
      expect(problem.detail).toMatch(/\/components/);
      expect(problem.detail).toMatch(/export/);
    }
    // The cap counts the nodes within the requested depth: one level is 12 components.
    expect(await treeBody(`${path}?recursion_depth=1`)).toHaveLength(12);
    const page = (await (await api(`/v1/products/${product.id}/components?size=100`)).json()) as Page;
    expect(page.total).toBe(12);
  });

  it("shows each node's owner as far as the owner's profile visibility allows, and answers If-None-Match with 304", async () => {
    const owner = await verifiedUser("private");
    await env.DB.prepare("UPDATE users SET profile_visibility = 'private' WHERE id = ?").bind(owner.id).run();
    const product = await create(owner.tokens.access_token, { name: "Radio", components: [withChildren("Tuner", 2)] });
    const path = `/v1/products/${product.id}/components/tree?recursion_depth=2`;

    const anonymous = await tree(path);
    const etag = anonymous.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(anonymous.headers.get("cache-control")).toBe("no-store");
    const hidden = flatten((await anonymous.json()) as Node[]);
    expect(hidden).toHaveLength(3);
    expect(hidden.map(({ node }) => [node.owner_id, node.owner_username])).toEqual(Array(3).fill([null, null]));

    const own = await tree(path, { headers: bearer(owner.tokens.access_token) });
    expect(roundTrips(own)).toBe(1);
    const shown = flatten((await own.json()) as Node[]);
    expect(shown.map(({ node }) => [node.owner_id, node.owner_username])).toEqual(Array(3).fill([owner.id, owner.username]));

    const again = await tree(path, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    const list = (await (await api(`/v1/products/${product.id}/components`)).json()) as { items: { owner_username: string | null }[] };
    expect(list.items.map((c) => c.owner_username)).toEqual([null]);
  });
});

describe("the tree answer written as JSON text", () => {
  it("is byte for byte the mapper's answer, for every viewer, with escapes, unicode, exact REALs, circularity notes and types", async () => {
    const owner = await verifiedUser("treejson");
    const type = await env.DB.prepare("INSERT INTO product_types (name) VALUES ('Tree JSON type') RETURNING id").first<{ id: number }>();
    const tricky = {
      name: 'Quote " backslash \\ é 😀 \u2028 </script>',
      description: "Tab\tnew\nline\rreturn",
      brand: "Brand ü",
      model: "M-1",
      weight_g: 0.30000000000000004,
      height_cm: 0.1,
      width_cm: 0.2,
      depth_cm: 123456789.12345679,
      product_type_id: type!.id,
      circularity_properties: { recyclability: 'Clip-fit "PP"', disassemblability: null, remanufacturability: "Yes" },
      amount_in_parent: 3,
    };
    const product = await create(owner.tokens.access_token, {
      name: "Tree JSON",
      components: [
        { ...tricky, components: [{ ...leaf("Deep"), components: [leaf("Deeper"), { ...tricky, name: "Twin" }] }, leaf("Sibling")] },
        { name: "Plain", amount_in_parent: 1, circularity_properties: { recyclability: "only one" } },
      ],
    });
    // A column the service never writes like this still reads as the mapper reads it (not an object: null).
    const plain = product.components[1]!.id;
    await env.DB.prepare("UPDATE products SET circularity_properties = '[1]' WHERE id = ?").bind(plain).run();
    const path = `/v1/products/${product.id}/components/tree?recursion_depth=10`;
    const { db } = createDb(env.DB);
    const self = { id: owner.id, isSuperuser: false, role: "contributor" } as SessionUser;
    let mapped = "";
    for (const visibility of ["public", "private"] as const) {
      await env.DB.prepare("UPDATE users SET profile_visibility = ? WHERE id = ?").bind(visibility, owner.id).run();
      // What the route answered before its rows came as JSON pieces: the rows, mapped and serialised.
      const rows = (await readComponentTree({ db }, product.id, "product", 10))!;
      expect(rows).toHaveLength(6);
      const expected = (viewer: SessionUser | null) => JSON.stringify(nestRows(product.id, rows, (row) => toComponentSummary(row, viewer)));
      const anonymous = await tree(path);
      expect(anonymous.status).toBe(200);
      expect(await anonymous.text()).toBe(expected(null));
      const own = await tree(path, { headers: bearer(owner.tokens.access_token) });
      expect(await own.text()).toBe(expected(self));
      mapped = expected(null);
    }
    const body = JSON.parse(mapped) as (Node & Record<string, unknown>)[];
    expect(body[0]).toMatchObject({
      name: tricky.name,
      weight_g: 0.30000000000000004,
      depth_cm: 123456789.12345679,
      volume_cm3: 0.1 * 0.2 * 123456789.12345679,
    });
    expect(body[0]!.circularity_properties).toEqual({
      recyclability: 'Clip-fit "PP"',
      disassemblability: null,
      remanufacturability: "Yes",
    });
    expect(body[1]!.circularity_properties).toBeNull();
  });
});

describe("the tree statement", () => {
  it("walks the parent index from the record and never scans the products table", async () => {
    for (const statements of [componentTreeStatements, componentTreeSummaryStatements]) {
      const { sql, params } = new SQLiteAsyncDialect().sqlToQuery(statements(1, "product", 10)[1]);
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...params)
        .all<{ detail: string }>();
      const steps = plan.results.map((row) => row.detail);
      expect(steps.filter((step) => step.includes("products_parent_idx"))).toHaveLength(2);
      expect(steps.filter((step) => /^SCAN (p|c|products)\b/.test(step))).toEqual([]);
      expect(params).toContain(1001);
    }
  });
});
