import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { pendingWithoutJob, scan, uploaded } from "../../support/media";
import { type CheckCode, quality, type Status, statuses, statusOf } from "../../support/quality";
import { createProduct, referenceRow } from "../../support/releases";

// The record-quality checks through the HTTP surface (decisions.md, Record quality; docs/quality.md):
// every check passes, fails and is not applicable where the contract says, the mass balances at
// and just beyond their tolerance, the density bounds, the tree summary; and the stored score the
// detail and list show is the score /quality answers.

let token: string;
let headers: Record<string, string>;
let ownerId: number;
let steel: number;
let copper: number;
let kettles: number;

beforeAll(async () => {
  const owner = await verifiedUser("quality");
  token = owner.tokens.access_token;
  headers = bearer(token);
  ownerId = owner.id;
  steel = await referenceRow("materials", "Steel (quality test)");
  copper = await referenceRow("materials", "Copper (quality test)");
  kettles = await referenceRow("product_types", "Kettle (quality test)");
});

const ALL_NOT_APPLICABLE_FOR_COMPONENTS: CheckCode[] = ["has_product_type", "has_circularity_notes"];

/** The detail's and the list's `quality_score` of a base product: the stored score. */
async function storedScores(id: number, name: string): Promise<number[]> {
  const detail = (await (await api(`/v1/products/${id}`)).json()) as { quality_score: number };
  const list = (await (await api(`/v1/products?name[ilike]=${encodeURIComponent(name)}`)).json()) as {
    items: { id: number; quality_score: number }[];
  };
  return [detail.quality_score, list.items.find((item) => item.id === id)!.quality_score];
}

describe("GET /v1/products/{id}/quality and /v1/components/{id}/quality", () => {
  it("pass every check on a complete record: one clean image, dimensions, type, notes, balanced components and materials", async () => {
    const name = `Complete kettle ${crypto.randomUUID().slice(0, 6)}`;
    const product = await createProduct(headers, {
      name,
      product_type_id: kettles,
      weight_g: 1000,
      height_cm: 10,
      width_cm: 10,
      depth_cm: 10,
      circularity_properties: { recyclability: "Steel body" },
      bill_of_materials: [
        { material_id: steel, quantity: 0.9, unit: "kg" },
        { material_id: copper, quantity: 100, unit: "g" },
      ],
      components: [
        { name: "Body", amount_in_parent: 1, weight_g: 600 },
        { name: "Feet", amount_in_parent: 4, weight_g: 100 },
      ],
    });
    const image = await uploaded(`/v1/products/${product.id}/images`, token, {
      bytes: encodeJpeg(32, 24, (x, y) => [x * 8, y * 10, 90]),
      name: "kettle.jpg",
      type: "image/jpeg",
    });
    await scan("images", image.id);

    const response = await api(`/v1/products/${product.id}/quality`);
    expect(response.status).toBe(200);
    // The record, its counts and the tree summary: one batch.
    expect(roundTrips(response)).toBe(1);
    const body = (await response.json()) as Awaited<ReturnType<typeof quality>>;
    expect(body.record_id).toBe(product.id);
    expect(body.score).toBe(1);
    expect(Object.values(statuses(body))).toEqual(Array(9).fill("pass"));
    expect(body.checks.map((check) => check.code)).toEqual([
      "has_product_type",
      "has_weight",
      "has_dimensions",
      "has_image",
      "has_breakdown",
      "components_mass_balance",
      "materials_mass_balance",
      "density_plausible",
      "has_circularity_notes",
    ]);
    const detail = Object.fromEntries(body.checks.map((check) => [check.code, check.detail]));
    expect(detail.components_mass_balance).toBe(
      "The 2 components (weight_g x amount_in_parent) add up to 1000 g against a weight of 1000 g: 0 g apart, within the tolerance of 100 g (10 %).",
    );
    expect(detail.materials_mass_balance).toContain("The 2 bill-of-materials entries in kg or g add up to 1000 g");
    expect(detail.has_image).toBe("1 clean image.");
    expect(await storedScores(product.id, name)).toEqual([1, 1]);
  });

  it("fail what a bare record lacks, and leave out what cannot be checked", async () => {
    const name = `Bare lamp ${crypto.randomUUID().slice(0, 6)}`;
    const product = (await createProduct(headers, { name, components: [{ name: "Shade", amount_in_parent: 1 }] })) as Awaited<
      ReturnType<typeof createProduct>
    > & { quality_score: number };
    const body = await quality("products", product.id);
    // The component makes a breakdown, but without weights there is nothing to balance.
    expect(statuses(body)).toEqual({
      has_product_type: "fail",
      has_weight: "fail",
      has_dimensions: "fail",
      has_image: "fail",
      has_breakdown: "pass",
      components_mass_balance: "not_applicable",
      materials_mass_balance: "not_applicable",
      density_plausible: "not_applicable",
      has_circularity_notes: "fail",
    } satisfies Record<CheckCode, Status>);
    expect(body.score).toBe(0.167);
    expect(product.quality_score).toBe(0.167);
    expect(await storedScores(product.id, name)).toEqual([0.167, 0.167]);

    // A component: no product type and no circularity notes to check; no tree summary.
    const component = await quality("components", product.components[0]!.id);
    for (const code of ALL_NOT_APPLICABLE_FOR_COMPONENTS) expect(statuses(component)[code]).toBe("not_applicable");
    expect(statuses(component).has_breakdown).toBe("fail");
    expect(component.tree).toBeUndefined();
    expect(component.score).toBe(0);
  });

  it("count only clean images: pending and rejected ones are no image", async () => {
    const product = await createProduct(headers, { name: "Camera with a pending photo" });
    await pendingWithoutJob("images", product.id, ownerId, { bytes: new Uint8Array([1, 2, 3]), name: "a.jpg", type: "image/jpeg" });
    const rejected = await pendingWithoutJob("images", product.id, ownerId, {
      bytes: new Uint8Array([4, 5]),
      name: "b.jpg",
      type: "image/jpeg",
    });
    await env.DB.prepare("UPDATE images SET status = 'rejected', rejected_reason = 'malware' WHERE id = ?").bind(rejected.id).run();
    expect(await statusOf("products", product.id, "has_image")).toBe("fail");
  });

  it("balance components at exactly 10 % off and fail just beyond, counting amount_in_parent", async () => {
    const balance = async (components: { weight_g: number | null; amount_in_parent: number }[]) => {
      const product = await createProduct(headers, {
        name: "Balance",
        weight_g: 1000,
        components: components.map((c, i) => ({ name: `Part ${i}`, ...c })),
      });
      return (await quality("products", product.id)).checks.find((c) => c.code === "components_mass_balance")!;
    };
    expect((await balance([{ weight_g: 550, amount_in_parent: 2 }])).status).toBe("pass");
    const beyond = await balance([{ weight_g: 550.25, amount_in_parent: 2 }]);
    expect(beyond).toEqual({
      code: "components_mass_balance",
      status: "fail",
      detail:
        "The 1 component (weight_g x amount_in_parent) adds up to 1100.5 g against a weight of 1000 g: 100.5 g apart, beyond the tolerance of 100 g (10 %).",
    });
    expect((await balance([{ weight_g: 300, amount_in_parent: 3 }])).status).toBe("pass");
    expect((await balance([{ weight_g: 299.5, amount_in_parent: 3 }])).status).toBe("fail");
    // One component without a weight: nothing to compare.
    const unweighed = await balance([
      { weight_g: 500, amount_in_parent: 2 },
      { weight_g: null, amount_in_parent: 1 },
    ]);
    expect(unweighed).toMatchObject({ status: "not_applicable", detail: "1 of 2 components has no weight_g." });
  });

  it("balance materials in kg and g at exactly 10 % off and fail just beyond; m and cm entries are left out", async () => {
    const wire = await referenceRow("materials", "Wire (quality test)");
    const balance = async (bill: { material_id: number; quantity: number; unit: string }[], weight: number | null = 1000) => {
      const product = await createProduct(headers, { name: "Materials", weight_g: weight, bill_of_materials: bill });
      return statusOf("products", product.id, "materials_mass_balance");
    };
    const metres = { material_id: wire, quantity: 3, unit: "m" };
    expect(
      await balance([{ material_id: steel, quantity: 1, unit: "kg" }, { material_id: copper, quantity: 100, unit: "g" }, metres]),
    ).toBe("pass");
    expect(await balance([{ material_id: steel, quantity: 0.9, unit: "kg" }])).toBe("pass");
    expect(
      await balance([
        { material_id: steel, quantity: 1, unit: "kg" },
        { material_id: copper, quantity: 100.5, unit: "g" },
      ]),
    ).toBe("fail");
    expect(await balance([{ material_id: copper, quantity: 899.5, unit: "g" }])).toBe("fail");
    expect(await balance([metres])).toBe("not_applicable");
    expect(await balance([{ material_id: steel, quantity: 1, unit: "kg" }], null)).toBe("not_applicable");
  });

  it("find densities from 0.005 to 25 g/cm³ plausible, both included, and fail just outside", async () => {
    const density = async (weight: number, dims: [number, number, number] | null = [10, 10, 10]) => {
      const size = dims ? { height_cm: dims[0], width_cm: dims[1], depth_cm: dims[2] } : {};
      const product = await createProduct(headers, { name: "Box", weight_g: weight, ...size });
      return statusOf("products", product.id, "density_plausible");
    };
    expect(await density(5)).toBe("pass");
    expect(await density(25_000)).toBe("pass");
    expect(await density(4.99)).toBe("fail");
    expect(await density(25_000.5)).toBe("fail");
    expect(await density(1000, null)).toBe("not_applicable");
  });

  it("summarise a base product's whole tree: records, failures per check, the 20 lowest scores", async () => {
    // 1 base product, 24 direct components (weights 1..24 g), one of them with a component of its own.
    const product = await createProduct(headers, {
      name: "Big tree",
      product_type_id: kettles,
      weight_g: 400,
      components: Array.from({ length: 24 }, (_, i) => ({
        name: `Part ${String(i + 1).padStart(2, "0")}`,
        amount_in_parent: 1,
        weight_g: i + 1,
        ...(i === 0 ? { components: [{ name: "Screw", amount_in_parent: 2 }] } : {}),
      })),
    });
    const body = await quality("products", product.id);
    expect(body.tree).toBeDefined();
    const tree = body.tree!;
    expect(tree.records).toBe(26);
    // Every component fails has_image and has_dimensions; 23 of them and the screw have no breakdown.
    expect(tree.failing).toMatchObject({ has_image: 26, has_dimensions: 26, has_breakdown: 24, has_weight: 1, has_product_type: 0 });
    // Sum 1 + ... + 24 = 300 g against 400 g: beyond 10 %.
    expect(statuses(body).components_mass_balance).toBe("fail");
    expect(tree.failing.components_mass_balance).toBe(1);
    expect(tree.lowest).toHaveLength(20);
    // The screw (no weight: score 0) first, then the unbroken parts (score 1/3) by id.
    expect(tree.lowest[0]).toMatchObject({ name: "Screw", score: 0 });
    const scores = tree.lowest.map((entry) => entry.score);
    expect([...scores].sort((a, b) => a - b)).toEqual(scores);
    const partIds = tree.lowest.slice(1).map((entry) => entry.id);
    expect([...partIds].sort((a, b) => a - b)).toEqual(partIds);
    // The mean over all 26 records, each the score its own /quality answers.
    const each = await Promise.all(
      (
        await env.DB.prepare("SELECT id, parent_id FROM products WHERE root_id = ?")
          .bind(product.id)
          .all<{ id: number; parent_id: number | null }>()
      ).results.map(async (row) => (await quality(row.parent_id === null ? "products" : "components", row.id)).score),
    );
    expect(tree.score_mean).toBe(Math.round((each.reduce((a, b) => a + b, 0) / each.length) * 1000) / 1000);
  });

  it("answers 404 for the other kind and unknown ids, 422 for malformed ones, and 304 to its ETag", async () => {
    const product = await createProduct(headers, { name: "Kinds", components: [{ name: "Part", amount_in_parent: 1 }] });
    await expectProblem(await api(`/v1/components/${product.id}/quality`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/products/${product.components[0]!.id}/quality`), 404, "NOT_FOUND");
    await expectProblem(await api("/v1/products/987654321/quality"), 404, "NOT_FOUND");
    expect((await api("/v1/products/abc/quality")).status).toBe(422);
    const first = await api(`/v1/products/${product.id}/quality`, { headers });
    const again = await api(`/v1/products/${product.id}/quality`, { headers: { ...headers, "if-none-match": first.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it("shows quality_score in component pages, trees and a create's answer, as stored", async () => {
    const product = await createProduct(headers, {
      name: "Scored tree",
      weight_g: 100,
      components: [{ name: "Heavy part", amount_in_parent: 1, weight_g: 50, components: [{ name: "Bolt", amount_in_parent: 1 }] }],
    });
    const part = product.components[0]!.id;
    const partScore = (await quality("components", part)).score;
    const created = (await (
      await postJson(`/v1/components/${part}/components`, { name: "Nut", amount_in_parent: 1, weight_g: 2 }, headers)
    ).json()) as {
      id: number;
      quality_score: number;
    };
    expect(created.quality_score).toBe((await quality("components", created.id)).score);
    const page = (await (await api(`/v1/products/${product.id}/components`)).json()) as { items: { id: number; quality_score: number }[] };
    expect(page.items[0]!.quality_score).toBe(partScore);
    const tree = (await (await api(`/v1/products/${product.id}/components/tree?recursion_depth=3`)).json()) as {
      quality_score: number;
      components: { id: number; quality_score: number }[];
    }[];
    expect(tree[0]!.quality_score).toBe(partScore);
    expect(tree[0]!.components.map((c) => c.quality_score)).toEqual(
      await Promise.all(tree[0]!.components.map(async (c) => (await quality("components", c.id)).score)),
    );
  });
});
