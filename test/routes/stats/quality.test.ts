import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips, rowsRead } from "../../support/http";
import type { CheckCode } from "../../support/quality";
import { asAdmin } from "../../support/reference";
import { createProduct, referenceRow } from "../../support/releases";

// GET /v1/stats/quality: the dataset's quality per kind of record, cached in KV like the other
// statistics, and yet never older than the data (the catalogue's generation validates a copy).

type Counts = { pass: number; fail: number; not_applicable: number };
interface StatsQuality {
  generated_at: string;
  base_products: Record<CheckCode, Counts>;
  components: Record<CheckCode, Counts>;
  score_deciles: { base_products: number[]; components: number[] };
}

let headers: Record<string, string>;

beforeAll(async () => {
  headers = bearer((await verifiedUser("statsq")).tokens.access_token);
});

async function stats(): Promise<{ response: Response; body: StatsQuality }> {
  const response = await api("/v1/stats/quality");
  expect(response.status, await response.clone().text()).toBe(200);
  return { response, body: (await response.clone().json()) as StatsQuality };
}

/** Reads until the answer is served from KV (stored after the response is sent). */
async function untilHit(): Promise<{ response: Response; body: StatsQuality }> {
  for (let tries = 0; ; tries++) {
    const read = await stats();
    if (read.response.headers.get("x-cache") === "hit" || tries >= 10) return read;
    await scheduler.wait(20);
  }
}

describe("GET /v1/stats/quality", () => {
  it("counts pass, fail and not applicable per check and kind, and the scores in tenths", async () => {
    const kettles = await referenceRow("product_types", "Kettle (stats test)");
    // Base product: type, weight, dimensions (density 1 g/cm³), notes pass; image fails; its two
    // components balance (2 x 250 + 500 = 1000 g): 7 of 8 pass = 0.875.
    await createProduct(headers, {
      name: "Counted kettle",
      product_type_id: kettles,
      weight_g: 1000,
      height_cm: 10,
      width_cm: 10,
      depth_cm: 10,
      circularity_properties: { recyclability: "Steel" },
      // Each component: weight passes; dimensions, image, breakdown fail: 1 of 4 = 0.25.
      components: [
        { name: "Half", amount_in_parent: 2, weight_g: 250 },
        { name: "Other half", amount_in_parent: 1, weight_g: 500 },
      ],
    });
    // A bare base product: 0 of 6.
    await createProduct(headers, { name: "Counted bare" });
    const { body, response } = await stats();
    expect(response.headers.get("x-cache")).toBe("miss");
    // From the counters the triggers keep (58 rows and the generation), not a scan of the records.
    expect(rowsRead(response)).toBeLessThan(100);
    expect(body.generated_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(body.base_products).toEqual({
      has_product_type: { pass: 1, fail: 1, not_applicable: 0 },
      has_weight: { pass: 1, fail: 1, not_applicable: 0 },
      has_dimensions: { pass: 1, fail: 1, not_applicable: 0 },
      has_image: { pass: 0, fail: 2, not_applicable: 0 },
      has_breakdown: { pass: 1, fail: 1, not_applicable: 0 },
      components_mass_balance: { pass: 1, fail: 0, not_applicable: 1 },
      materials_mass_balance: { pass: 0, fail: 0, not_applicable: 2 },
      density_plausible: { pass: 1, fail: 0, not_applicable: 1 },
      has_circularity_notes: { pass: 1, fail: 1, not_applicable: 0 },
    });
    expect(body.components.has_product_type).toEqual({ pass: 0, fail: 0, not_applicable: 2 });
    expect(body.components.has_weight).toEqual({ pass: 2, fail: 0, not_applicable: 0 });
    expect(body.components.has_breakdown).toEqual({ pass: 0, fail: 2, not_applicable: 0 });
    // Deciles: [0, 0.1) ... [0.9, 1), then exactly 1.
    expect(body.score_deciles.base_products).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
    expect(body.score_deciles.components).toEqual([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it("is served from the cache until a write changes the data, then computed afresh at once", async () => {
    const first = await stats();
    const hit = await untilHit();
    expect(hit.response.headers.get("x-cache")).toBe("hit");
    // The generation check, nothing more.
    expect(roundTrips(hit.response)).toBe(1);
    expect(hit.body).toEqual(first.body);

    // A create.
    const made = await createProduct(headers, { name: "Fresh stats", weight_g: 10 });
    const afterCreate = await stats();
    expect(afterCreate.response.headers.get("x-cache")).toBe("miss");
    expect(afterCreate.body.base_products.has_weight.pass).toBe(first.body.base_products.has_weight.pass + 1);

    // A bill-of-materials entry: breakdown passes, 10 g of steel balances 10 g.
    await untilHit();
    const steel = await referenceRow("materials", "Steel (stats test)");
    expect((await postJson(`/v1/products/${made.id}/materials/${steel}`, { quantity: 10, unit: "g" }, headers)).status).toBe(201);
    const afterBom = await stats();
    expect(afterBom.response.headers.get("x-cache")).toBe("miss");
    expect(afterBom.body.base_products.materials_mass_balance.pass).toBe(afterCreate.body.base_products.materials_mass_balance.pass + 1);

    // A write straight to the database (an image settling, as the media job does) is seen too.
    await untilHit();
    await env.DB.prepare(
      `INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, width, height)
       VALUES (?, ?, 'k.jpg', 'k.jpg', 'image/jpeg', 10, 'clean', 1, 1)`,
    )
      .bind("c".repeat(32), made.id)
      .run();
    const afterImage = await stats();
    expect(afterImage.response.headers.get("x-cache")).toBe("miss");
    expect(afterImage.body.base_products.has_image.pass).toBe(afterBom.body.base_products.has_image.pass + 1);
  });

  it("is cleared with the other statistics, and takes no parameters", async () => {
    await untilHit();
    expect((await asAdmin("POST", "/v1/admin/cache/clear/stats")).status).toBe(200);
    expect((await stats()).response.headers.get("x-cache")).toBe("miss");
    await expectProblem(await api("/v1/stats/quality?scope=all"), 422, "VALIDATION_FAILED");
  });
});
