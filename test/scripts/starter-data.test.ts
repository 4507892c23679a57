import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { checkTemplates, DEMO_ACCOUNT, DEMO_COUNTS_QUERY, demoStatements, generateDemo } from "../../scripts/seed/demo-data.mjs";
import {
  MATERIAL_TAXONOMY,
  MATERIALS,
  PRODUCT_CATEGORIES,
  PRODUCT_TAXONOMY,
  PRODUCT_TYPES,
  sqlValue,
  starterStatements,
} from "../../scripts/seed/starter-data.mjs";

/** Runs statements as `wrangler d1 execute --file` does: one D1 batch. */
async function run(statements: string[]) {
  return env.DB.batch(statements.map((s) => env.DB.prepare(s)));
}

interface Counts {
  taxonomies: number;
  categories: number;
  materials: number;
  material_links: number;
  product_types: number;
  type_links: number;
  units: number;
}

async function counts() {
  return env.DB.prepare(
    `SELECT (SELECT count(*) FROM taxonomies) AS taxonomies, (SELECT count(*) FROM categories) AS categories,
       (SELECT count(*) FROM materials) AS materials, (SELECT count(*) FROM material_categories) AS material_links,
       (SELECT count(*) FROM product_types) AS product_types, (SELECT count(*) FROM product_type_categories) AS type_links,
       (SELECT count(*) FROM units) AS units`,
  ).first<Counts>();
}

async function taxonomyId(name: string, version: string) {
  const row = await env.DB.prepare("SELECT id FROM taxonomies WHERE name = ?1 AND version = ?2")
    .bind(name, version)
    .first<{ id: number }>();
  return row!.id;
}

describe("starter data", () => {
  it("is idempotent: a second run changes no count", async () => {
    const before = await counts();
    await run(starterStatements());
    const first = await counts();
    await run(starterStatements());
    const second = await counts();
    expect(second).toEqual(first);
    expect(first!.taxonomies - before!.taxonomies).toBe(2);
    expect(first!.materials - before!.materials).toBe(MATERIALS.length);
    expect(first!.product_types - before!.product_types).toBe(PRODUCT_TYPES.length);
    expect(first!.units).toBe(4);
  });

  it("holds a product taxonomy of 30 to 50 categories, 2 to 3 levels deep", async () => {
    await run(starterStatements());
    const id = await taxonomyId(PRODUCT_TAXONOMY.name, PRODUCT_TAXONOMY.version);
    const taxonomy = await env.DB.prepare("SELECT domains, source FROM taxonomies WHERE id = ?1")
      .bind(id)
      .first<{ domains: string; source: string }>();
    expect(JSON.parse(taxonomy!.domains)).toEqual(["products"]);
    expect(taxonomy!.source).toBeTruthy();
    const { results: levels } = await env.DB.prepare(
      `WITH RECURSIVE t(id, level) AS (
         SELECT id, 1 FROM categories WHERE taxonomy_id = ?1 AND supercategory_id IS NULL
         UNION ALL SELECT c.id, t.level + 1 FROM categories c JOIN t ON c.supercategory_id = t.id)
       SELECT level, count(*) AS n FROM t GROUP BY level ORDER BY level`,
    )
      .bind(id)
      .all<{ level: number; n: number }>();
    expect(levels.map((l) => l.level)).toEqual([1, 2, 3]);
    const total = levels.reduce((sum, l) => sum + l.n, 0);
    expect(total).toBe(PRODUCT_CATEGORIES.length);
    expect(total).toBeGreaterThanOrEqual(30);
    expect(total).toBeLessThanOrEqual(50);
    // Parents resolved by external id: Kettles sits under Kitchen appliances under Household appliances.
    const kettles = await env.DB.prepare(
      `SELECT c.name, p.name AS parent, g.name AS grandparent FROM categories c
       JOIN categories p ON p.id = c.supercategory_id JOIN categories g ON g.id = p.supercategory_id
       WHERE c.taxonomy_id = ?1 AND c.external_id = 'prod.kitchen.kettles'`,
    )
      .bind(id)
      .first();
    expect(kettles).toEqual({ name: "Kettles", parent: "Kitchen appliances", grandparent: "Household appliances" });
  });

  it("gives every material a positive density and a category of the materials taxonomy", async () => {
    await run(starterStatements());
    const id = await taxonomyId(MATERIAL_TAXONOMY.name, MATERIAL_TAXONOMY.version);
    const names = MATERIALS.map((m) => sqlValue(m.name)).join(", ");
    const { results } = await env.DB.prepare(
      `SELECT m.name, m.density_kg_m3 AS density, m.is_crm,
         (SELECT count(*) FROM material_categories mc JOIN categories c ON c.id = mc.category_id
          WHERE mc.material_id = m.id AND c.taxonomy_id = ?1) AS links
       FROM materials m WHERE m.name IN (${names})`,
    )
      .bind(id)
      .all<{ name: string; density: number; is_crm: number; links: number }>();
    expect(results).toHaveLength(MATERIALS.length);
    for (const m of results) {
      expect(m.density, m.name).toBeGreaterThan(0);
      expect(m.links, m.name).toBe(1);
    }
    const byName = new Map(results.map((m) => [m.name, m]));
    expect(byName.get("Steel")!.density).toBe(7850);
    expect(byName.get("Aluminium")!.density).toBe(2700);
    expect(byName.get("Copper")!.density).toBe(8960);
    expect(byName.get("ABS")!.density).toBe(1050);
    expect(byName.get("PP")!.density).toBe(905);
    expect(byName.get("Soda-lime glass")!.density).toBe(2500);
  });

  it("flags the materials of the EU 2023 critical raw materials list, and only those", async () => {
    await run(starterStatements());
    const crm = [
      "Cobalt",
      "Lithium cobalt oxide",
      "Lithium iron phosphate",
      "Natural graphite",
      "Neodymium magnet",
      "Gallium nitride",
      "Tantalum",
      "Palladium",
      "Silicon",
      "Tungsten",
      "Magnesium",
      "Aluminium",
      "Copper",
    ];
    const notCrm = [
      "Steel",
      "Stainless steel",
      "Brass",
      "Nickel",
      "Tin",
      "Gold",
      "Natural rubber",
      "Indium tin oxide",
      "ABS",
      "FR-4",
      "Solder (SAC305)",
    ];
    const { results } = await env.DB.prepare(
      `SELECT name, is_crm FROM materials WHERE name IN (${[...crm, ...notCrm].map((n) => sqlValue(n)).join(", ")})`,
    ).all<{ name: string; is_crm: number }>();
    const flags = Object.fromEntries(results.map((r) => [r.name, r.is_crm]));
    for (const name of crm) expect(flags[name], name).toBe(1);
    for (const name of notCrm) expect(flags[name], name).toBe(0);
  });

  it("links every product type to its product category", async () => {
    await run(starterStatements());
    const id = await taxonomyId(PRODUCT_TAXONOMY.name, PRODUCT_TAXONOMY.version);
    for (const type of PRODUCT_TYPES) {
      const link = await env.DB.prepare(
        `SELECT c.external_id FROM product_types t JOIN product_type_categories l ON l.product_type_id = t.id
         JOIN categories c ON c.id = l.category_id WHERE t.name = ?1 AND c.taxonomy_id = ?2`,
      )
        .bind(type.name, id)
        .all<{ external_id: string }>();
      expect(
        link.results.map((r) => r.external_id),
        type.name,
      ).toEqual([type.category]);
    }
  });

  it("quotes values safely", () => {
    expect(sqlValue("O'Brien")).toBe("'O''Brien'");
    expect(sqlValue(null)).toBe("NULL");
    expect(sqlValue(true)).toBe("1");
    expect(sqlValue(2.5)).toBe("2.5");
    expect(() => sqlValue(Number.NaN)).toThrow();
  });
});

describe("demo data", () => {
  it("names only starter materials and product types", () => {
    expect(
      checkTemplates(
        MATERIALS.map((m) => m.name),
        PRODUCT_TYPES.map((t) => t.name),
      ),
    ).toEqual([]);
  });

  it("is reproducible for a seed", () => {
    expect(generateDemo(20, 7)).toEqual(generateDemo(20, 7));
    expect(demoStatements({ products: 20, seed: 7 })).toEqual(demoStatements({ products: 20, seed: 7 }));
  });

  it("adds products with component trees and bills of materials past the reserved ids, and --reset replaces them", async () => {
    const { records, bom } = generateDemo(25, 3);
    const [first] = await run([...demoStatements({ products: 25, seed: 3 }), DEMO_COUNTS_QUERY]).then(
      (r) => r.at(-1)!.results as Record<string, number>[],
    );
    expect(first).toMatchObject({ base_products: 25, components: records.length - 25, bom_entries: bom.length, max_depth: 3 });

    const owner = await env.DB.prepare("SELECT id, hashed_password, is_verified FROM users WHERE username = ?1")
      .bind(DEMO_ACCOUNT.username)
      .first();
    expect(owner).toMatchObject({ hashed_password: null, is_verified: 1 });
    // Every component sits one level below its parent; base products have a type of the starter set.
    const bad = await env.DB.prepare(
      `SELECT count(*) AS n FROM products c LEFT JOIN products p ON p.id = c.parent_id
       WHERE c.owner_id = ?1 AND ((c.parent_id IS NULL AND (c.depth <> 0 OR c.product_type_id IS NULL))
         OR (c.parent_id IS NOT NULL AND (p.id IS NULL OR c.depth <> p.depth + 1 OR c.amount_in_parent < 1)))`,
    )
      .bind(owner!.id)
      .first<{ n: number }>();
    expect(bad!.n).toBe(0);
    // The id block moved past the new rows: the API's next create cannot collide with them.
    const block = await env.DB.prepare(
      "SELECT next_id, (SELECT max(id) FROM products) AS max_id FROM id_blocks WHERE name = 'products'",
    ).first<{ next_id: number; max_id: number }>();
    expect(block!.next_id).toBeGreaterThan(block!.max_id);

    await run(demoStatements({ products: 10, seed: 4 }));
    const added = await env.DB.prepare(DEMO_COUNTS_QUERY).first<Record<string, number>>();
    expect(added!.base_products).toBe(35);

    await run(demoStatements({ products: 5, seed: 5, reset: true }));
    const reset = await env.DB.prepare(DEMO_COUNTS_QUERY).first<Record<string, number>>();
    expect(reset!.base_products).toBe(5);
    const orphans = await env.DB.prepare(
      "SELECT count(*) AS n FROM bill_of_materials b LEFT JOIN products p ON p.id = b.product_id WHERE p.id IS NULL",
    ).first<{ n: number }>();
    expect(orphans!.n).toBe(0);

    await run(demoStatements({ products: 0, reset: true }));
    expect((await env.DB.prepare(DEMO_COUNTS_QUERY).first<Record<string, number>>())!.base_products).toBe(0);
  });

  it("keeps every statement under D1's 100 KB limit", () => {
    for (const statement of demoStatements({ products: 300 })) expect(statement.length).toBeLessThan(100_000);
  });
});
