import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";
import {
  asAdmin,
  type Category,
  type CategoryNode,
  expectStatus,
  materialCategoryIds,
  newCategory,
  newTaxonomy,
  readUntilHit,
  seedLinkedMaterial,
  send,
  shape,
} from "../../support/reference";

const newTaxonomyId = async () => (await newTaxonomy()).id;
const create = (body: Record<string, unknown>) => asAdmin("POST", "/v1/admin/categories", body);
const patch = (id: number, body: unknown) => asAdmin("PATCH", `/v1/admin/categories/${id}`, body);
const remove = (id: number) => asAdmin("DELETE", `/v1/admin/categories/${id}`);

/** A taxonomy with root -> child -> grandchild, and a second root. */
async function chain() {
  const taxonomy = await newTaxonomyId();
  const root = await newCategory({ name: "Root", taxonomy_id: taxonomy });
  const child = await newCategory({ name: "Child", supercategory_id: root.id });
  const grandchild = await newCategory({ name: "Grandchild", supercategory_id: child.id });
  const sibling = await newCategory({ name: "Sibling", taxonomy_id: taxonomy });
  return { taxonomy, root, child, grandchild, sibling };
}

async function readTree(taxonomy: number, depth = 3): Promise<CategoryNode[]> {
  const response = await api(`/v1/taxonomies/${taxonomy}/categories/tree?recursion_depth=${depth}`);
  return (await expectStatus<{ items: CategoryNode[] }>(response, 200)).items;
}

describe("POST /v1/admin/categories", () => {
  it("creates top-level categories and subcategories, which take their supercategory's taxonomy; 201 with Location; audited", async () => {
    const taxonomy = await newTaxonomyId();
    const admin = await bootstrapAdmin();
    const logs = captureLogs();
    let response: Response;
    try {
      response = await create({ name: " Appliances ", taxonomy_id: taxonomy, description: "Large and small", external_id: "APP" });
      expect(logs.entries().find((entry) => entry.event === "admin.reference.created")).toMatchObject({
        actor_id: admin.id,
        kind: "category",
      });
    } finally {
      logs.restore();
    }
    const root = await expectStatus<Category>(response, 201);
    expect(response.headers.get("location")).toBe(`/v1/categories/${root.id}`);
    expect(root).toEqual({
      id: expect.any(Number),
      name: "Appliances",
      description: "Large and small",
      external_id: "APP",
      taxonomy_id: taxonomy,
      supercategory_id: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const sub = await newCategory({ name: "Kettles", supercategory_id: root.id });
    expect(sub).toMatchObject({ taxonomy_id: taxonomy, supercategory_id: root.id, description: null, external_id: null });
    expect(await expectStatus(await api(`/v1/categories/${sub.id}`), 200)).toMatchObject({
      supercategory: { id: root.id, name: "Appliances" },
    });
  });

  it("refuses both or neither of taxonomy_id and supercategory_id, unknown members and bad values with 422", async () => {
    const { taxonomy, root } = await chain();
    const bodies: Record<string, unknown>[] = [
      { name: "Both", taxonomy_id: taxonomy, supercategory_id: root.id },
      { name: "Neither" },
      { name: "Moved", taxonomy_id: taxonomy, id: 5 },
      { name: "", taxonomy_id: taxonomy },
      { name: "x".repeat(101), taxonomy_id: taxonomy },
      { taxonomy_id: taxonomy },
      { name: "Negative", taxonomy_id: -1 },
      { name: "Text", taxonomy_id: String(taxonomy) },
      { name: "Null", supercategory_id: null },
      { name: "Blank id", taxonomy_id: taxonomy, external_id: " " },
    ];
    for (const body of bodies) await expectProblem(await create(body), 422, "VALIDATION_FAILED");
    const unknownTaxonomy = await expectProblem(await create({ name: "Lost", taxonomy_id: 999999 }), 422, "VALIDATION_FAILED");
    expect(unknownTaxonomy.errors).toEqual([{ pointer: "/taxonomy_id", detail: "No taxonomy has this id." }]);
    const unknownSuper = await expectProblem(await create({ name: "Lost", supercategory_id: 999999 }), 422, "VALIDATION_FAILED");
    expect(unknownSuper.errors).toEqual([{ pointer: "/supercategory_id", detail: "No category has this id." }]);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM categories WHERE taxonomy_id = ?").bind(taxonomy).first<{ n: number }>();
    expect(count?.n).toBe(4);
  });

  it("refuses an external_id already used in the taxonomy with 409; other taxonomies may reuse it", async () => {
    const { taxonomy, root } = await chain();
    await newCategory({ name: "First", taxonomy_id: taxonomy, external_id: "X-1" });
    await expectProblem(await create({ name: "Second", supercategory_id: root.id, external_id: "X-1" }), 409, "CATEGORY_EXTERNAL_ID_TAKEN");
    await newCategory({ name: "Elsewhere", taxonomy_id: await newTaxonomyId(), external_id: "X-1" });
  });
});

describe("PATCH /v1/admin/categories/{id}", () => {
  it("renames, clears members and moves a category with its subtree, or to the top with null; audited", async () => {
    const { taxonomy, child, sibling } = await chain();
    const admin = await bootstrapAdmin();
    const logs = captureLogs();
    let moved: Category;
    try {
      moved = await expectStatus<Category>(
        await patch(child.id, { supercategory_id: sibling.id, name: "Moved child", description: "Now below Sibling" }),
        200,
      );
      expect(logs.entries().find((entry) => entry.event === "admin.reference.updated")).toMatchObject({
        actor_id: admin.id,
        kind: "category",
        id: child.id,
        fields: ["name", "description", "supercategory_id"],
      });
    } finally {
      logs.restore();
    }
    expect(moved).toMatchObject({
      id: child.id,
      name: "Moved child",
      description: "Now below Sibling",
      supercategory_id: sibling.id,
      taxonomy_id: taxonomy,
    });
    expect(shape(await readTree(taxonomy))).toEqual({ Root: {}, Sibling: { "Moved child": { Grandchild: {} } } });

    const top = await expectStatus<Category>(await patch(child.id, { supercategory_id: null, description: null }), 200);
    expect(top).toMatchObject({ supercategory_id: null, description: null });
    expect(shape(await readTree(taxonomy))).toEqual({ "Moved child": { Grandchild: {} }, Root: {}, Sibling: {} });
    // An empty body changes nothing and still answers the record.
    expect(await expectStatus<Category>(await patch(child.id, {}), 200)).toEqual(top);
  });

  it("refuses a move below the category itself or one of its descendants with 400 CATEGORY_CYCLE", async () => {
    const { taxonomy, root, child, grandchild } = await chain();
    await expectProblem(await patch(root.id, { supercategory_id: root.id }), 400, "CATEGORY_CYCLE");
    await expectProblem(await patch(root.id, { supercategory_id: child.id }), 400, "CATEGORY_CYCLE");
    await expectProblem(await patch(root.id, { supercategory_id: grandchild.id, name: "Renamed" }), 400, "CATEGORY_CYCLE");
    expect(shape(await readTree(taxonomy))).toEqual({ Root: { Child: { Grandchild: {} } }, Sibling: {} });
  });

  it("lets only one of two concurrent crossing moves through, so no cycle can form", async () => {
    const { taxonomy, root, sibling } = await chain();
    const [first, second] = await Promise.all([
      patch(root.id, { supercategory_id: sibling.id }),
      patch(sibling.id, { supercategory_id: root.id }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const refused = first.status === 400 ? first : second;
    await expectProblem(refused, 400, "CATEGORY_CYCLE");
    const tree = shape(await readTree(taxonomy, 5));
    expect(Object.keys(tree)).toHaveLength(1);
  });

  it("refuses a supercategory of another taxonomy (400), an unknown one (422), the taxonomy and other members (422)", async () => {
    const { root } = await chain();
    const elsewhere = await newCategory({ name: "Foreign", taxonomy_id: await newTaxonomyId() });
    await expectProblem(await patch(root.id, { supercategory_id: elsewhere.id }), 400, "CATEGORY_TAXONOMY_MISMATCH");
    const unknown = await expectProblem(await patch(root.id, { supercategory_id: 999999 }), 422, "VALIDATION_FAILED");
    expect(unknown.errors?.[0]?.pointer).toBe("/supercategory_id");
    for (const body of [
      { taxonomy_id: elsewhere.taxonomy_id },
      { id: 3 },
      { name: null },
      { name: "" },
      { supercategory_id: 0 },
      { created_at: "2026-01-01T00:00:00Z" },
    ]) {
      await expectProblem(await patch(root.id, body), 422, "VALIDATION_FAILED");
    }
    expect(await expectStatus(await api(`/v1/categories/${root.id}`), 200)).toMatchObject({ name: "Root", supercategory_id: null });
  });

  it("refuses an external_id another category of the taxonomy has with 409, and an unknown id with 404", async () => {
    const { root, child } = await chain();
    await expectStatus(await patch(root.id, { external_id: "R" }), 200);
    await expectProblem(await patch(child.id, { external_id: "R" }), 409, "CATEGORY_EXTERNAL_ID_TAKEN");
    await expectProblem(await patch(999999, { name: "Nobody" }), 404, "CATEGORY_NOT_FOUND");
    await expectProblem(await patch(999999, {}), 404, "CATEGORY_NOT_FOUND");
  });
});

describe("DELETE /v1/admin/categories/{id}", () => {
  it("deletes the category with its subtree and their material links; siblings stay; audited", async () => {
    const { taxonomy, root, child, grandchild, sibling } = await chain();
    const material = await seedLinkedMaterial([child.id, sibling.id]);

    const logs = captureLogs();
    let response: Response;
    try {
      response = await remove(root.id);
      expect(logs.entries().find((entry) => entry.event === "admin.reference.deleted")).toMatchObject({ kind: "category", id: root.id });
    } finally {
      logs.restore();
    }
    expect(response.status).toBe(204);
    for (const id of [root.id, child.id, grandchild.id]) await expectProblem(await api(`/v1/categories/${id}`), 404, "CATEGORY_NOT_FOUND");
    expect(shape(await readTree(taxonomy))).toEqual({ Sibling: {} });
    expect(await materialCategoryIds(material)).toEqual([sibling.id]);
    await expectProblem(await remove(root.id), 404, "CATEGORY_NOT_FOUND");
  });
});

describe("caching", () => {
  it("serves a repeat read from the cache, and every admin write clears it before it answers", async () => {
    const { taxonomy, root } = await chain();
    const path = `/v1/taxonomies/${taxonomy}/categories/tree`;
    const warm = () => readUntilHit(path);
    const missAfter = async (write: Response, status: number) => {
      expect(write.status, await write.clone().text()).toBe(status);
      const next = await api(path);
      expect(next.headers.get("x-cache")).toBe("miss");
      return shape((await expectStatus<{ items: CategoryNode[] }>(next, 200)).items);
    };

    await warm();
    const added = await create({ name: "Added", supercategory_id: root.id });
    expect(await missAfter(added, 201)).toEqual({ Root: { Child: {}, Added: {} }, Sibling: {} });
    const { id } = (await added.json()) as Category;
    await warm();
    expect(await missAfter(await patch(id, { name: "Renamed" }), 200)).toEqual({ Root: { Child: {}, Renamed: {} }, Sibling: {} });
    await warm();
    expect(await missAfter(await remove(id), 204)).toEqual({ Root: { Child: {} }, Sibling: {} });
  });
});

describe("who may write", () => {
  const writes = (id: number): [string, string, unknown][] => [
    ["POST", "/v1/admin/categories", { name: "Nope", supercategory_id: id }],
    ["PATCH", `/v1/admin/categories/${id}`, { name: "Nope" }],
    ["DELETE", `/v1/admin/categories/${id}`, undefined],
  ];

  it("refuses an ordinary signed-in user with 403 SUPERUSER_REQUIRED and anonymous callers with 401", async () => {
    const { root } = await chain();
    const user = await verifiedUser("plain");
    for (const [method, path, body] of writes(root.id)) {
      await expectProblem(await send(method, path, user.tokens.access_token, body), 403, "SUPERUSER_REQUIRED");
      await expectProblem(await send(method, path, null, body), 401, "AUTHENTICATION_REQUIRED");
    }
    expect(await expectStatus(await api(`/v1/categories/${root.id}`), 200)).toMatchObject({
      name: "Root",
      subcategories: [{ name: "Child" }],
    });
  });
});
