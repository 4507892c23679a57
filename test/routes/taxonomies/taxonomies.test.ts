import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";
import {
  asAdmin,
  expectStatus,
  materialCategoryIds,
  newCategory,
  newTaxonomy,
  type Page,
  read,
  readUntilHit,
  seedLinkedMaterial,
  send,
  type Taxonomy,
  unique,
} from "../../support/reference";

const create = (body: Record<string, unknown>) => asAdmin("POST", "/v1/admin/taxonomies", body);
const patch = (id: number, body: unknown) => asAdmin("PATCH", `/v1/admin/taxonomies/${id}`, body);
const remove = (id: number) => asAdmin("DELETE", `/v1/admin/taxonomies/${id}`);

describe("GET /v1/taxonomies", () => {
  it("filters by domain and name, orders by name (any case) by default, and pages in one round trip", async () => {
    const prefix = unique("list");
    const b = await newTaxonomy({ name: `${prefix} beta`, domains: ["materials", "other"] });
    const a = await newTaxonomy({ name: `${prefix} Alpha`, domains: ["products"] });
    const c = await newTaxonomy({ name: `${prefix} gamma 100%`, domains: ["other", "materials", "products"] });

    const response = await api(`/v1/taxonomies?name[ilike]=${prefix}&size=2`);
    expect(roundTrips(response)).toBe(1);
    const first = await expectStatus<Page<Taxonomy>>(response, 200);
    expect(first).toMatchObject({ total: 3, page: 1, size: 2, pages: 2 });
    expect(first.items.map((t) => t.id)).toEqual([a.id, b.id]);
    expect(first.items[1]).toEqual({ ...b, domains: ["materials", "other"] });
    const second = await read<Page<Taxonomy>>(`/v1/taxonomies?name[ilike]=${prefix}&size=2&page=2`);
    expect(second.items.map((t) => t.id)).toEqual([c.id]);
    // Stored in a fixed order whatever order they were sent in.
    expect(second.items[0]!.domains).toEqual(["materials", "products", "other"]);

    const materials = await read<Page<Taxonomy>>(`/v1/taxonomies?name[ilike]=${prefix}&domain=materials`);
    expect(materials.items.map((t) => t.id)).toEqual([b.id, c.id]);
    const products = await read<Page<Taxonomy>>(`/v1/taxonomies?name[ilike]=${prefix}&domain=products&order_by=-name`);
    expect(products.items.map((t) => t.id)).toEqual([c.id, a.id]);
    const newest = await read<Page<Taxonomy>>(`/v1/taxonomies?name[ilike]=${prefix}&order_by=-created_at,-id`);
    expect(newest.items.map((t) => t.id)).toEqual([c.id, a.id, b.id]);
    // `%` is a plain character in the pattern.
    const percent = await read<Page<Taxonomy>>(`/v1/taxonomies?name[ilike]=${encodeURIComponent("0%")}`);
    expect(percent.items.map((t) => t.id)).toEqual([c.id]);
  });

  it("refuses unknown and malformed parameters with 422", async () => {
    for (const query of ["domain=wood", "kind=materials", "order_by=version", "order_by=id,id", "size=0", "page=-1", "name[like]=x"]) {
      const problem = await expectProblem(await api(`/v1/taxonomies?${query}`), 422, "VALIDATION_FAILED");
      expect(problem.errors?.[0]?.pointer).toMatch(/^#\/query\//);
    }
  });
});

describe("GET /v1/taxonomies/{id} and its categories", () => {
  it("counts categories of every level, lists them with the category filters, and 404s for unknown ids", async () => {
    const taxonomy = await newTaxonomy({ description: "Described", source: "https://example.org/tax" });
    const root = await newCategory({ name: "Root", taxonomy_id: taxonomy.id });
    const child = await newCategory({ name: "Child", supercategory_id: root.id, external_id: "C" });
    await newCategory({ name: "Grandchild", supercategory_id: child.id });
    await newCategory({ name: "Another root", taxonomy_id: taxonomy.id });

    const response = await api(`/v1/taxonomies/${taxonomy.id}`);
    expect(roundTrips(response)).toBe(1);
    expect(await expectStatus(response, 200)).toEqual({ ...taxonomy, category_count: 4 });

    const all = await read<Page<{ name: string }>>(`/v1/taxonomies/${taxonomy.id}/categories`);
    expect(all.items.map((c) => c.name)).toEqual(["Another root", "Child", "Grandchild", "Root"]);
    const roots = await read<Page<{ name: string }>>(`/v1/taxonomies/${taxonomy.id}/categories?is_root=true&order_by=-name`);
    expect(roots.items.map((c) => c.name)).toEqual(["Root", "Another root"]);
    const paged = await api(`/v1/taxonomies/${taxonomy.id}/categories?size=1&page=2&name[ilike]=child`);
    expect(roundTrips(paged)).toBe(1);
    expect(await expectStatus(paged, 200)).toMatchObject({ total: 2, pages: 2, items: [{ name: "Grandchild" }] });
    expect(await read(`/v1/taxonomies/${taxonomy.id}/categories?external_id=C`)).toMatchObject({ total: 1, items: [{ id: child.id }] });

    await expectProblem(await api(`/v1/taxonomies/${taxonomy.id}/categories?taxonomy_id=${taxonomy.id}`), 422, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/taxonomies/999999"), 404, "TAXONOMY_NOT_FOUND");
    await expectProblem(await api("/v1/taxonomies/999999/categories"), 404, "TAXONOMY_NOT_FOUND");
    await expectProblem(await api("/v1/taxonomies/999999/categories/tree"), 404, "TAXONOMY_NOT_FOUND");
    await expectProblem(await api("/v1/taxonomies/nope"), 422, "VALIDATION_FAILED");
  });
});

describe("POST /v1/admin/taxonomies", () => {
  it("creates a taxonomy: 201 with Location, audited", async () => {
    const admin = await bootstrapAdmin();
    const name = unique("Created ");
    const logs = captureLogs();
    let response: Response;
    try {
      response = await create({ name: ` ${name} `, version: "2024", domains: ["products", "materials"], source: "ISO 22628" });
      expect(logs.entries().find((entry) => entry.event === "admin.reference.created")).toMatchObject({
        actor_id: admin.id,
        kind: "taxonomy",
      });
    } finally {
      logs.restore();
    }
    const created = await expectStatus<Taxonomy>(response, 201);
    expect(response.headers.get("location")).toBe(`/v1/taxonomies/${created.id}`);
    expect(created).toEqual({
      id: expect.any(Number),
      name,
      version: "2024",
      description: null,
      domains: ["materials", "products"],
      source: "ISO 22628",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(await read(`/v1/taxonomies/${created.id}`)).toEqual({ ...created, category_count: 0 });
  });

  it("refuses bad domains, names, versions and unknown members with 422, and a taken name and version with 409", async () => {
    const base = { name: unique("Strict "), version: "1", domains: ["other"] };
    for (const body of [
      { ...base, domains: [] },
      { ...base, domains: ["products", "products"] },
      { ...base, domains: ["products", "materials", "other", "other"] },
      { ...base, domains: ["wood"] },
      { ...base, domains: "products" },
      { ...base, name: "" },
      { ...base, name: "x".repeat(101) },
      { ...base, version: undefined },
      { ...base, version: " " },
      { ...base, id: 7 },
      { ...base, category_count: 3 },
    ]) {
      await expectProblem(await create(body), 422, "VALIDATION_FAILED");
    }
    await newTaxonomy(base as Partial<Taxonomy>);
    await expectProblem(await create(base), 409, "TAXONOMY_NAME_TAKEN");
    await newTaxonomy({ ...base, version: "2" } as Partial<Taxonomy>);
  });
});

describe("PATCH /v1/admin/taxonomies/{id}", () => {
  it("changes the members given, clears nullable ones, and refuses taken names (409), unknown ids (404), bad bodies (422)", async () => {
    const taxonomy = await newTaxonomy({ description: "Old", source: "Somewhere" });
    const logs = captureLogs();
    let response: Response;
    try {
      response = await patch(taxonomy.id, { version: "2", domains: ["other", "materials"], description: null });
      expect(logs.entries().find((entry) => entry.event === "admin.reference.updated")).toMatchObject({
        kind: "taxonomy",
        id: taxonomy.id,
        fields: ["version", "domains", "description"],
      });
    } finally {
      logs.restore();
    }
    const updated = await expectStatus<Taxonomy>(response, 200);
    expect(updated).toMatchObject({
      ...taxonomy,
      version: "2",
      domains: ["materials", "other"],
      description: null,
      source: "Somewhere",
      updated_at: expect.any(String),
    });
    expect(await expectStatus(await patch(taxonomy.id, {}), 200)).toEqual(updated);

    const other = await newTaxonomy();
    await expectProblem(await patch(other.id, { name: taxonomy.name, version: "2" }), 409, "TAXONOMY_NAME_TAKEN");
    await expectProblem(await patch(999999, { version: "3" }), 404, "TAXONOMY_NOT_FOUND");
    for (const body of [{ name: null }, { version: null }, { domains: [] }, { domains: null }, { id: 1 }, { category_count: 0 }]) {
      await expectProblem(await patch(taxonomy.id, body), 422, "VALIDATION_FAILED");
    }
  });
});

describe("DELETE /v1/admin/taxonomies/{id}", () => {
  it("deletes the taxonomy with all its categories and their links; other taxonomies stay", async () => {
    const taxonomy = await newTaxonomy();
    const root = await newCategory({ name: "Root", taxonomy_id: taxonomy.id });
    const child = await newCategory({ name: "Child", supercategory_id: root.id });
    const kept = await newCategory({ name: "Kept", taxonomy_id: (await newTaxonomy()).id });
    const material = await seedLinkedMaterial([child.id, kept.id]);

    const logs = captureLogs();
    try {
      expect((await remove(taxonomy.id)).status).toBe(204);
      expect(logs.entries().find((entry) => entry.event === "admin.reference.deleted")).toMatchObject({
        kind: "taxonomy",
        id: taxonomy.id,
      });
    } finally {
      logs.restore();
    }
    await expectProblem(await api(`/v1/taxonomies/${taxonomy.id}`), 404, "TAXONOMY_NOT_FOUND");
    for (const id of [root.id, child.id]) await expectProblem(await api(`/v1/categories/${id}`), 404, "CATEGORY_NOT_FOUND");
    const left = await env.DB.prepare("SELECT count(*) AS n FROM categories WHERE taxonomy_id = ?")
      .bind(taxonomy.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    expect(await materialCategoryIds(material)).toEqual([kept.id]);
    expect((await api(`/v1/categories/${kept.id}`)).status).toBe(200);
    await expectProblem(await remove(taxonomy.id), 404, "TAXONOMY_NOT_FOUND");
  });
});

describe("caching", () => {
  it("serves a repeat read from the cache without the database, until an admin write clears it", async () => {
    const taxonomy = await newTaxonomy();
    const path = `/v1/taxonomies/${taxonomy.id}`;
    const first = await api(path);
    expect(first.headers.get("x-cache")).toBe("miss");
    expect(roundTrips(first)).toBe(1);
    const again = await readUntilHit(path);
    expect(roundTrips(again)).toBe(0);
    expect(await again.json()).toEqual(await first.json());

    expect((await patch(taxonomy.id, { description: "Changed" })).status).toBe(200);
    const after = await api(path);
    expect(after.headers.get("x-cache")).toBe("miss");
    expect(await after.json()).toMatchObject({ description: "Changed" });
  });
});

describe("who may write", () => {
  it("refuses an ordinary signed-in user with 403 SUPERUSER_REQUIRED and anonymous callers with 401", async () => {
    const taxonomy = await newTaxonomy();
    const user = await verifiedUser("plain");
    const writes: [string, string, unknown][] = [
      ["POST", "/v1/admin/taxonomies", { name: unique("Nope "), version: "1", domains: ["other"] }],
      ["PATCH", `/v1/admin/taxonomies/${taxonomy.id}`, { version: "9" }],
      ["DELETE", `/v1/admin/taxonomies/${taxonomy.id}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      await expectProblem(await send(method, path, user.tokens.access_token, body), 403, "SUPERUSER_REQUIRED");
      await expectProblem(await send(method, path, null, body), 401, "AUTHENTICATION_REQUIRED");
    }
    expect(await read(`/v1/taxonomies/${taxonomy.id}`)).toMatchObject({ version: "1" });
  });
});
