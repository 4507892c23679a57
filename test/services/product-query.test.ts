import { env } from "cloudflare:workers";
import { createRoute } from "@hono/zod-openapi";
import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { batchRows, createDb } from "../../src/db/client";
import type { Problem } from "../../src/lib/problem";
import { createRouter } from "../../src/lib/router";
import { onError } from "../../src/middleware/error-handler";
import {
  ProductFacetsQuerySchema,
  ProductListQuerySchema,
  ProductSuggestionsQuerySchema,
  parseProductListQuery,
  productFilterFromQuery,
} from "../../src/routes/products/products.query";
import {
  type CountRow,
  type FacetRow,
  type FacetValue,
  facetStatement,
  facetsFromRows,
  ftsMatchQuery,
  type ProductExportCursor,
  type ProductFilter,
  type ProductListRow,
  productExportRoots,
  productListStatements,
  suggestionStatements,
} from "../../src/services/products/query";

// Storage is per test file: the rows seeded here are the only products the statements see.

const T0 = 1_780_000_000;
const ALL = { page: 1, size: 100 };

/** Seeded base products by label; the component is `battery`. */
const ids: Record<string, number> = {};
const users: Record<string, number> = {};
let labelOf: Map<number, string>;

async function insertUser(name: string, visibility: string): Promise<number> {
  const row = await env.DB.prepare(
    "INSERT INTO users (email, email_canonical, username, profile_visibility) VALUES (?1, ?1, ?2, ?3) RETURNING id",
  )
    .bind(`${name}@pq.example.org`, `pq_${name}`, visibility)
    .first<{ id: number }>();
  return row!.id;
}

async function insertType(name: string): Promise<number> {
  const row = await env.DB.prepare("INSERT INTO product_types (name) VALUES (?) RETURNING id").bind(name).first<{ id: number }>();
  return row!.id;
}

interface Seed {
  label: string;
  owner: string;
  name: string;
  description: string | null;
  brand: string | null;
  model: string | null;
  weight: number | null;
  type: number | null;
  created: number;
  updated: number;
}

async function insertProduct(p: Seed): Promise<number> {
  const row = await env.DB.prepare(
    `INSERT INTO products (owner_id, name, description, brand, model, weight_g, product_type_id, created_at, updated_at, parent_id, depth)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0) RETURNING id`,
  )
    .bind(users[p.owner], p.name, p.description, p.brand, p.model, p.weight, p.type, T0 + p.created, T0 + p.updated)
    .first<{ id: number }>();
  return row!.id;
}

beforeAll(async () => {
  users.alice = await insertUser("alice", "public");
  users.bob = await insertUser("bob", "community");
  users.carol = await insertUser("carol", "private");
  const smartphone = await insertType("Smartphone");
  const laptop = await insertType("Laptop");
  await insertType("Kettle");

  const seeds: Seed[] = [
    {
      label: "fairphone",
      owner: "alice",
      name: "Fairphone 4",
      description: "Modular phone with a replaceable battery",
      brand: "fairphone",
      model: "FP4",
      weight: 225,
      type: smartphone,
      created: 100,
      updated: 500,
    },
    {
      label: "nokia",
      owner: "alice",
      name: "Nokia 3310",
      description: "Classic candy bar phone",
      brand: "nokia",
      model: "3310",
      weight: 133,
      type: smartphone,
      created: 200,
      updated: 200,
    },
    {
      label: "thinkpad",
      owner: "bob",
      name: "ThinkPad X220",
      description: "Business laptop",
      brand: "lenovo",
      model: "X220",
      weight: 1300,
      type: laptop,
      created: 300,
      updated: 900,
    },
    {
      label: "kettle",
      owner: "bob",
      name: "Kettle pro_2",
      description: "Electric kettle OR teapot",
      brand: null,
      model: null,
      weight: null,
      type: null,
      created: 300,
      updated: 300,
    },
    {
      label: "framework",
      owner: "carol",
      name: "Framework Laptop",
      description: 'Repairable NEAR(laptop) with "quotes"',
      brand: "framework",
      model: "13 AMD",
      weight: 1300,
      type: laptop,
      created: 400,
      updated: 400,
    },
    {
      label: "fairbuds",
      owner: "carol",
      name: "fairbuds XL 100%",
      description: "Headphones: over-ear",
      brand: "fairphone",
      model: "XL",
      weight: 50.5,
      type: null,
      created: 500,
      updated: 500,
    },
  ];
  for (const seed of seeds) ids[seed.label] = await insertProduct(seed);

  // A component of the Fairphone: it matches many filters below and must never be listed.
  const component = await env.DB.prepare(
    `INSERT INTO products (owner_id, name, description, brand, model, weight_g, product_type_id, created_at, updated_at, parent_id, amount_in_parent, depth)
     VALUES (?, 'Battery fairphone', 'Fairphone battery pack', 'fairphone', 'FP4-BAT', 60, ?, ?, ?, ?, 1, 1) RETURNING id`,
  )
    .bind(users.alice, smartphone, T0 + 150, T0 + 150, ids.fairphone)
    .first<{ id: number }>();
  ids.battery = component!.id;
  labelOf = new Map(Object.entries(ids).map(([label, id]) => [id, label]));
});

/** Labels of the listed rows, in order, and the total. */
async function list(
  filter: ProductFilter,
  viewerId: number | null = null,
  page = ALL,
): Promise<{ labels: string[]; total: number; rows: ProductListRow[] }> {
  const { db } = createDb(env.DB);
  const [rows, count] = await batchRows<[ProductListRow, CountRow]>(db, productListStatements(filter, viewerId, page));
  return { labels: rows.map((r) => labelOf.get(r.id) ?? `?${r.id}`), total: count[0]!.total, rows };
}

async function labels(filter: ProductFilter, viewerId: number | null = null): Promise<string[]> {
  const { labels: found, total } = await list(filter, viewerId);
  expect(total).toBe(found.length);
  return found;
}

/** The same labels, sorted, for filters whose order is not the point. */
async function set(filter: ProductFilter, viewerId: number | null = null): Promise<string[]> {
  return (await labels(filter, viewerId)).sort();
}

const NEWEST_FIRST = ["fairbuds", "framework", "kettle", "thinkpad", "nokia", "fairphone"];

describe("product list statements", () => {
  it("lists base products only, newest first, with owner and type columns, in one round trip", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const [rows, count] = await batchRows<[ProductListRow, CountRow]>(db, productListStatements({}, null, ALL));
    expect(roundTrips.count).toBe(1);
    expect(count[0]!.total).toBe(6);
    expect(rows.map((r) => labelOf.get(r.id))).toEqual(NEWEST_FIRST);
    expect(rows.some((r) => r.id === ids.battery)).toBe(false);

    const fairphone = rows.find((r) => r.id === ids.fairphone)!;
    expect(fairphone).toMatchObject({
      parent_id: null,
      owner_id: users.alice,
      name: "Fairphone 4",
      brand: "fairphone",
      model: "FP4",
      weight_g: 225,
      depth: 0,
      version: 1,
      created_at: T0 + 100,
      updated_at: T0 + 500,
      owner_username: "pq_alice",
      owner_visibility: "public",
      product_type_name: "Smartphone",
    });
    expect(Object.keys(fairphone).sort()).toEqual(
      [
        "id",
        "parent_id",
        "owner_id",
        "name",
        "description",
        "brand",
        "model",
        "weight_g",
        "height_cm",
        "width_cm",
        "depth_cm",
        "volume_cm3",
        "circularity_properties",
        "product_type_id",
        "amount_in_parent",
        "depth",
        "version",
        "created_at",
        "updated_at",
        "quality_score",
        "owner_username",
        "owner_visibility",
        "product_type_name",
      ].sort(),
    );
    const kettle = rows.find((r) => r.id === ids.kettle)!;
    expect(kettle).toMatchObject({ product_type_name: null, owner_visibility: "community" });
    expect(rows.find((r) => r.id === ids.framework)!.owner_visibility).toBe("private");
  });

  it("finds one and two characters wherever they lie in the value: where a trigram begins, in the last two, or both", async () => {
    // Beyond ASCII, lower() folds no case: "Ä" is not "ä", and the Kelvin sign is no "k".
    // FTS5 stores U+FFFE and U+FFFF as U+FFFD: text holding one of the three is decided row by row.
    const extra = {
      umlauts: ["Öko Kühlschrank Ä", "ÄÖ"],
      kelvin: ["\u212Aettle ße", "ß"],
      replaced: ["ab\uFFFFcd \uFFFEx", "y\uFFFDz"],
    } as const;
    for (const [label, [name, model]] of Object.entries(extra)) {
      const id = await insertProduct({
        label,
        owner: "alice",
        name,
        description: null,
        brand: null,
        model,
        weight: null,
        type: null,
        created: 50,
        updated: 50,
      });
      ids[label] = id;
      labelOf.set(id, label);
    }
    const lowerAscii = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
    const values = {
      nameIlike: {
        fairphone: "Fairphone 4",
        nokia: "Nokia 3310",
        thinkpad: "ThinkPad X220",
        kettle: "Kettle pro_2",
        framework: "Framework Laptop",
        fairbuds: "fairbuds XL 100%",
        umlauts: extra.umlauts[0],
        kelvin: extra.kelvin[0],
        replaced: extra.replaced[0],
      },
      modelIlike: {
        fairphone: "FP4",
        nokia: "3310",
        thinkpad: "X220",
        kettle: null,
        framework: "13 AMD",
        fairbuds: "XL",
        umlauts: "ÄÖ",
        kelvin: "ß",
        replaced: "y\uFFFDz",
      },
    } as const;
    try {
      for (const [key, byLabel] of Object.entries(values) as [keyof typeof values, Record<string, string | null>][]) {
        const texts = new Set([
          "zq",
          "q",
          "Q",
          "XL",
          "aI",
          " 4",
          "0%",
          "ä",
          "k",
          "K",
          "\u212A",
          "ÖKO",
          "ttle",
          "ETTLE ß",
          "\uFFFD",
          "b\uFFFDc",
          "B\uFFFFC",
          "y\uFFFFz",
        ]);
        for (const value of Object.values(byLabel)) {
          const characters = [...(value ?? "")];
          for (let i = 0; i < characters.length; i++) {
            texts.add(characters[i]!);
            if (i + 2 <= characters.length) texts.add(characters.slice(i, i + 2).join(""));
          }
        }
        for (const text of texts) {
          const expected = Object.entries(byLabel)
            .filter(([, value]) => value !== null && lowerAscii(value).includes(lowerAscii(text)))
            .map(([label]) => label)
            .sort();
          expect(await set({ [key]: text }), `${key} ${JSON.stringify(text)}`).toEqual(expected);
          // A page of one: the plan may walk the order instead of the candidates; the total is the same.
          const first = await list({ [key]: text }, null, { page: 1, size: 1 });
          expect([first.labels.length, first.total], `${key} ${JSON.stringify(text)}, a page of one`).toEqual([
            Math.min(1, expected.length),
            expected.length,
          ]);
        }
      }
    } finally {
      await env.DB.prepare("DELETE FROM products WHERE id IN (?, ?, ?)").bind(ids.umlauts, ids.kelvin, ids.replaced).run();
      for (const label of Object.keys(extra)) {
        labelOf.delete(ids[label]!);
        delete ids[label];
      }
    }
  });

  it("filters name and model by case-insensitive substring, wildcards taken literally", async () => {
    expect(await set({ nameIlike: "PHONE" })).toEqual(["fairphone"]);
    expect(await set({ nameIlike: "pad" })).toEqual(["thinkpad"]);
    expect(await set({ nameIlike: "%" })).toEqual(["fairbuds"]);
    expect(await set({ nameIlike: "_" })).toEqual(["kettle"]);
    expect(await set({ nameIlike: "\\" })).toEqual([]);
    expect(await set({ nameIlike: "battery" })).toEqual([]); // only the component is named so
    expect(await set({ modelIlike: "x" })).toEqual(["fairbuds", "thinkpad"]);
    expect(await set({ modelIlike: "fp4-" })).toEqual([]);
  });

  it("filters brand and product type name by lists", async () => {
    expect(await set({ brandIn: ["fairphone", "nokia"] })).toEqual(["fairbuds", "fairphone", "nokia"]);
    expect(await set({ brandIn: ["acme"] })).toEqual([]);
    expect(await set({ productTypeNameIn: ["smartphone"] })).toEqual(["fairphone", "nokia"]);
    expect(await set({ productTypeNameIn: ["Laptop", "Kettle"] })).toEqual(["framework", "thinkpad"]);
  });

  it("filters created_at, updated_at and weight_g by inclusive ranges", async () => {
    expect(await set({ createdAt: { ge: T0 + 300 } })).toEqual(["fairbuds", "framework", "kettle", "thinkpad"]);
    expect(await set({ createdAt: { le: T0 + 200 } })).toEqual(["fairphone", "nokia"]);
    expect(await set({ createdAt: { ge: T0 + 200, le: T0 + 300 } })).toEqual(["kettle", "nokia", "thinkpad"]);
    expect(await set({ updatedAt: { ge: T0 + 500 } })).toEqual(["fairbuds", "fairphone", "thinkpad"]);
    expect(await set({ updatedAt: { le: T0 + 300 } })).toEqual(["kettle", "nokia"]);
    expect(await set({ weightG: { ge: 225 } })).toEqual(["fairphone", "framework", "thinkpad"]);
    expect(await set({ weightG: { le: 133 } })).toEqual(["fairbuds", "nokia"]);
    expect(await set({ weightG: { ge: 50.5, le: 50.5 } })).toEqual(["fairbuds"]);
    expect(await set({ weightG: { ge: 300, le: 200 } })).toEqual([]);
  });

  it("owner=me lists the viewer's products, and nothing for an anonymous viewer", async () => {
    expect(await set({ ownerMe: true }, users.alice!)).toEqual(["fairphone", "nokia"]);
    expect(await set({ ownerMe: true }, users.carol!)).toEqual(["fairbuds", "framework"]);
    expect(await set({ ownerMe: true }, null)).toEqual([]);
    expect(await set({}, users.alice!)).toHaveLength(6);
  });

  it("combines filters with AND", async () => {
    expect(await set({ brandIn: ["fairphone"], weightG: { ge: 100 } })).toEqual(["fairphone"]);
    expect(await set({ search: "fair", ownerMe: true }, users.carol!)).toEqual(["fairbuds"]);
    expect(await set({ productTypeNameIn: ["laptop"], nameIlike: "frame", createdAt: { ge: T0 + 400 } })).toEqual(["framework"]);
    expect(
      await set(
        {
          search: "phone",
          ownerMe: true,
          nameIlike: "o",
          brandIn: ["nokia", "fairphone"],
          modelIlike: "3",
          createdAt: { ge: T0, le: T0 + 1000 },
          updatedAt: { ge: T0, le: T0 + 1000 },
          weightG: { ge: 1, le: 1000 },
          productTypeNameIn: ["Smartphone"],
        },
        users.alice!,
      ),
    ).toEqual(["nokia"]);
  });
});

describe("search", () => {
  it("matches words in name, description, brand or model", async () => {
    expect(await set({ search: "thinkpad" })).toEqual(["thinkpad"]); // name
    expect(await set({ search: "business" })).toEqual(["thinkpad"]); // description
    expect(await set({ search: "lenovo" })).toEqual(["thinkpad"]); // brand
    expect(await set({ search: "X220" })).toEqual(["thinkpad"]); // model
    expect(await set({ search: "battery" })).toEqual(["fairphone"]); // not the component
  });

  it("needs every word, and matches the last one as a prefix only", async () => {
    expect(await set({ search: "fair" })).toEqual(["fairbuds", "fairphone"]);
    expect(await set({ search: "phone batt" })).toEqual(["fairphone"]);
    expect(await set({ search: "batt phone" })).toEqual([]);
    expect(await set({ search: "lapt" })).toEqual(["framework", "thinkpad"]);
    expect(await set({ search: "laptop repairable" })).toEqual(["framework"]);
  });

  it("turns user text into quoted terms", () => {
    expect(ftsMatchQuery("fair phone")).toBe('"fair" "phone"*');
    expect(ftsMatchQuery('say "hi"')).toBe('"say" """hi"""*');
    expect(ftsMatchQuery("nokia * - :")).toBe('"nokia"*');
    expect(ftsMatchQuery("a\u0000b")).toBe('"a" "b"*');
    expect(ftsMatchQuery(' * " ')).toBeNull();
  });

  it("treats FTS syntax in the input as text, never as an error", async () => {
    // OR is a word here, not an alternative: both sides and "or" itself must appear.
    expect(await set({ search: "kettle OR teapot" })).toEqual(["kettle"]);
    expect(await set({ search: "kettle OR nokia" })).toEqual([]);
    expect(await set({ search: "NEAR(laptop" })).toEqual(["framework"]);
    expect(await set({ search: '"quotes"' })).toEqual(["framework"]);
    expect(await set({ search: "-nokia" })).toEqual(["nokia"]);
    expect(await set({ search: "headphones:" })).toEqual(["fairbuds"]);
    expect(await set({ search: "name:fair" })).toEqual([]);
    expect(await set({ search: "nokia *" })).toEqual(["nokia"]);
    const hostile = [
      '"',
      "*",
      "OR",
      "NEAR(",
      "-",
      ":",
      "^",
      "(",
      ")",
      "a OR",
      "NOT nokia",
      'a" OR "b',
      "NEAR(a b, 2)",
      "{name}: x",
      "nok\u0000ia",
      "AND",
      "+",
      "\\",
      "''",
    ];
    for (const search of hostile) {
      const { total } = await list({ search });
      expect(total, search).toBeGreaterThanOrEqual(0);
    }
    expect(await set({ search: "*" })).toEqual([]);
  });
});

describe("ordering and paging", () => {
  const order = (text: string) => productFilterFromQuery({ order_by: ProductListQuerySchema.shape.order_by.parse(text) });

  it("orders by the given terms, nulls last, ties broken by id in the last term's direction", async () => {
    expect(await labels({})).toEqual(NEWEST_FIRST);
    expect(await labels(order("-created_at"))).toEqual(NEWEST_FIRST);
    expect(await labels(order("created_at"))).toEqual(["fairphone", "nokia", "thinkpad", "kettle", "framework", "fairbuds"]);
    expect(await labels(order("+created_at"))).toEqual(["fairphone", "nokia", "thinkpad", "kettle", "framework", "fairbuds"]);
    expect(await labels(order("brand,-created_at"))).toEqual(["fairbuds", "fairphone", "framework", "thinkpad", "nokia", "kettle"]);
    expect(await labels(order("-brand"))).toEqual(["nokia", "thinkpad", "framework", "fairbuds", "fairphone", "kettle"]);
    expect(await labels(order("brand"))).toEqual(["fairphone", "fairbuds", "framework", "thinkpad", "nokia", "kettle"]);
    expect(await labels(order("product_type_name,name"))).toEqual(["framework", "thinkpad", "fairphone", "nokia", "fairbuds", "kettle"]);
    expect(await labels(order("name"))).toEqual(["fairbuds", "fairphone", "framework", "kettle", "nokia", "thinkpad"]);
    expect(await labels(order("-updated_at"))).toEqual(["thinkpad", "fairbuds", "fairphone", "framework", "kettle", "nokia"]);
    expect(await labels(order("model"))).toEqual(["framework", "nokia", "fairphone", "thinkpad", "fairbuds", "kettle"]);
    expect(await labels(order("-model"))).toEqual(["fairbuds", "thinkpad", "fairphone", "nokia", "framework", "kettle"]);
  });

  it("pages with a stable order and the total over all pages", async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const result = await list({}, null, { page, size: 2 });
      expect(result.total).toBe(6);
      expect(result.labels).toHaveLength(2);
      seen.push(...result.labels);
    }
    expect(seen).toEqual(NEWEST_FIRST);
    const past = await list({}, null, { page: 4, size: 2 });
    expect(past).toMatchObject({ labels: [], total: 6 });
    const filtered = await list({ brandIn: ["fairphone"] }, null, { page: 2, size: 1 });
    expect(filtered).toMatchObject({ labels: ["fairphone"], total: 2 });
  });
});

describe("export chunks", () => {
  async function exportAll(filter: ProductFilter, chunkSize: number, viewerId: number | null = null): Promise<string[]> {
    const { db } = createDb(env.DB);
    const out: string[] = [];
    let after: ProductExportCursor | null = null;
    for (let guard = 0; guard < 50; guard++) {
      const rows: ProductExportCursor[] = await db.all<ProductExportCursor>(productExportRoots(filter, viewerId, after, chunkSize));
      out.push(...rows.map((r) => labelOf.get(r.id)!));
      if (rows.length < chunkSize) return out;
      after = rows[rows.length - 1]!;
    }
    throw new Error("export did not end");
  }

  it("returns every matching base product exactly once, in the list's order", async () => {
    const orders = [
      undefined,
      "created_at",
      "brand,-created_at",
      "-brand",
      "-model",
      "product_type_name,name",
      "-updated_at",
      "model,brand,-name",
      "-product_type_name,-brand",
    ];
    for (const text of orders) {
      const filter = text ? productFilterFromQuery({ order_by: ProductListQuerySchema.shape.order_by.parse(text) }) : {};
      const expected = await labels(filter);
      for (const size of [1, 2, 4, 6, 100]) {
        expect(await exportAll(filter, size), `${text} by ${size}`).toEqual(expected);
      }
    }
  });

  it("applies the same filters", async () => {
    expect(await exportAll({ brandIn: ["fairphone", "nokia"] }, 1)).toEqual(["fairbuds", "nokia", "fairphone"]);
    expect(await exportAll({ search: "lapt" }, 1)).toEqual(["framework", "thinkpad"]);
    expect(await exportAll({ ownerMe: true }, 1, users.bob!)).toEqual(["kettle", "thinkpad"]);
    expect(await exportAll({ ownerMe: true }, 1, null)).toEqual([]);
  });

  it("neither skips nor repeats rows inserted behind the cursor meanwhile", async () => {
    const { db } = createDb(env.DB);
    const first = await db.all<ProductExportCursor>(productExportRoots({}, null, null, 3));
    expect(first.map((r) => labelOf.get(r.id))).toEqual(NEWEST_FIRST.slice(0, 3));
    // A newer product sorts before the cursor: the rest of the export must not show it.
    const late = await insertProduct({
      label: "late",
      owner: "alice",
      name: "Late entry",
      description: null,
      brand: null,
      model: null,
      weight: null,
      type: null,
      created: 999,
      updated: 999,
    });
    try {
      const rest = await db.all<ProductExportCursor>(productExportRoots({}, null, first[2]!, 100));
      expect(rest.map((r) => labelOf.get(r.id))).toEqual(NEWEST_FIRST.slice(3));
    } finally {
      await env.DB.prepare("DELETE FROM products WHERE id = ?").bind(late).run();
    }
  });
});

describe("facets", () => {
  async function facets(filter: ProductFilter, fields: ("brand" | "model" | "product_type_name")[], viewerId: number | null = null) {
    const { db, roundTrips } = createDb(env.DB);
    const [rows] = await batchRows<[FacetRow]>(db, [facetStatement(filter, fields, viewerId)]);
    expect(roundTrips.count).toBe(1);
    return facetsFromRows(fields, rows);
  }

  it("counts values over the filtered base products, most frequent first, nulls left out", async () => {
    expect(await facets({}, ["brand", "model", "product_type_name"])).toEqual({
      brand: [
        { value: "fairphone", count: 2 },
        { value: "framework", count: 1 },
        { value: "lenovo", count: 1 },
        { value: "nokia", count: 1 },
      ],
      model: ["13 AMD", "3310", "FP4", "X220", "XL"].map((value) => ({ value, count: 1 })),
      product_type_name: [
        { value: "Laptop", count: 2 },
        { value: "Smartphone", count: 2 },
      ],
    });
    expect(await facets({ ownerMe: true }, ["brand"], users.alice!)).toEqual({
      brand: [
        { value: "fairphone", count: 1 },
        { value: "nokia", count: 1 },
      ],
    });
    expect(await facets({ productTypeNameIn: ["laptop"], search: "laptop" }, ["brand", "product_type_name"])).toEqual({
      brand: [
        { value: "framework", count: 1 },
        { value: "lenovo", count: 1 },
      ],
      product_type_name: [{ value: "Laptop", count: 2 }],
    });
    expect(await facets({ brandIn: ["acme"] }, ["model"])).toEqual({ model: [] });
  });
});

describe("suggestions", () => {
  async function suggest(kind: "brands" | "models", search: string, page = ALL) {
    const { db, roundTrips } = createDb(env.DB);
    const [rows, count] = await batchRows<[FacetValue, CountRow]>(db, suggestionStatements(kind, search, page));
    expect(roundTrips.count).toBe(1);
    return { values: rows.map((r) => r.value), counts: rows.map((r) => r.count), total: count[0]!.total };
  }

  it("suggests distinct values by case-insensitive prefix, components included, most used first", async () => {
    expect(await suggest("brands", "F")).toEqual({ values: ["fairphone", "framework"], counts: [3, 1], total: 2 });
    expect(await suggest("brands", "fair")).toMatchObject({ values: ["fairphone"], total: 1 });
    expect(await suggest("brands", "air")).toMatchObject({ values: [], total: 0 });
    expect(await suggest("models", "x")).toMatchObject({ values: ["X220", "XL"], total: 2 });
    expect(await suggest("models", "fp")).toMatchObject({ values: ["FP4", "FP4-BAT"], total: 2 });
    expect(await suggest("models", "%")).toMatchObject({ values: [], total: 0 });
    expect(await suggest("models", "_")).toMatchObject({ values: [], total: 0 });
  });

  it("pages every value for an empty prefix", async () => {
    const first = await suggest("brands", "", { page: 1, size: 2 });
    const second = await suggest("brands", "", { page: 2, size: 2 });
    const third = await suggest("brands", "", { page: 3, size: 2 });
    expect(first).toMatchObject({ values: ["fairphone", "framework"], total: 4 });
    expect(second).toMatchObject({ values: ["lenovo", "nokia"], total: 4 });
    expect(third).toMatchObject({ values: [], total: 4 });
  });
});

// The plans themselves (indexes, rows read) are pinned on a demo dataset in product-plans.test.ts.

describe("bound parameters", () => {
  const dialect = new SQLiteAsyncDialect();
  const params = (query: SQL) => dialect.sqlToQuery(query).params.length;
  const fifty = (prefix: string) => Array.from({ length: 50 }, (_, i) => `${prefix}${i}`);
  const everything: ProductFilter = {
    search: "a b c d e f g h",
    ownerMe: true,
    nameIlike: "a",
    modelIlike: "b",
    brandIn: [...fifty("brand"), "fairphone"].slice(1),
    productTypeNameIn: [...fifty("type"), "smartphone"].slice(1),
    createdAt: { ge: 1, le: T0 * 2 },
    updatedAt: { ge: 1, le: T0 * 2 },
    weightG: { ge: 1, le: 10_000 },
    orderBy: ["brand", "model", "name", "created_at", "updated_at", "product_type_name"].map((field, i) => ({
      field: field as "brand",
      descending: i % 2 === 0,
    })),
  };

  it("are one per statement (a JSON text) with every filter, full lists and a six-term export cursor", async () => {
    const [rows, total] = productListStatements(everything, users.alice!, { page: 1, size: 50 });
    const cursor = { id: 1, name: "n", brand: null, model: "m", created_at: 1, updated_at: 2, product_type_name: "t" };
    const chunk = productExportRoots(everything, users.alice!, cursor, 100);
    for (const query of [rows, total, chunk, facetStatement(everything, ["brand", "model", "product_type_name"], users.alice!)]) {
      expect(params(query)).toBe(1);
    }
    // And D1 runs them.
    const { db } = createDb(env.DB);
    await batchRows(db, [rows, total, chunk]);
  });
});

describe("query schemas", () => {
  const app = createRouter();
  app.onError(onError);
  app.openapi(
    createRoute({
      method: "get",
      path: "/products",
      request: { query: ProductListQuerySchema },
      responses: { 200: { description: "ok" } },
    }),
    (c) => c.json(parseProductListQuery(c.req.valid("query")), 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/facets",
      request: { query: ProductFacetsQuerySchema },
      responses: { 200: { description: "ok" } },
    }),
    (c) => c.json(c.req.valid("query").fields, 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/suggestions",
      request: { query: ProductSuggestionsQuerySchema },
      responses: { 200: { description: "ok" } },
    }),
    (c) => c.json(c.req.valid("query"), 200),
  );

  async function parse(query: string) {
    const response = await app.request(`/products?${query}`);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as { filter: ProductFilter; page: { page: number; size: number } };
  }

  async function pointers(path: string): Promise<string[]> {
    const response = await app.request(path);
    expect(response.status).toBe(422);
    const body = (await response.json()) as Problem;
    return (body.errors ?? []).map((e) => e.pointer);
  }

  it("turns the query into a filter and a page", async () => {
    expect(await parse("")).toEqual({ filter: {}, page: { page: 1, size: 50 } });
    const all = await parse(
      [
        "search=%20fair%20phone%20",
        "owner=me",
        "name[ilike]=Pad",
        "brand%5Bin%5D=FairPhone,%20Nokia,,fairphone",
        "model[ilike]=x_",
        "created_at[ge]=2026-05-01T12:00:00Z",
        "created_at[le]=2026-05-01T14:00:00%2B02:00",
        "updated_at[ge]=2026-05-01T12:00:00.500Z",
        "weight_g[ge]=100",
        "weight_g[le]=250.5",
        "product_type_name[in]=Smartphone,Laptop",
        "order_by=-brand,+name,model",
        "page=2",
        "size=10",
      ].join("&"),
    );
    expect(all).toEqual({
      filter: {
        search: "fair phone",
        ownerMe: true,
        nameIlike: "Pad",
        brandIn: ["fairphone", "nokia"],
        modelIlike: "x_",
        createdAt: { ge: Date.UTC(2026, 4, 1, 12) / 1000, le: Date.UTC(2026, 4, 1, 12) / 1000 },
        updatedAt: { ge: Date.UTC(2026, 4, 1, 12) / 1000 + 0.5 },
        weightG: { ge: 100, le: 250.5 },
        productTypeNameIn: ["Smartphone", "Laptop"],
        orderBy: [
          { field: "brand", descending: true },
          { field: "name", descending: false },
          { field: "model", descending: false },
        ],
      },
      page: { page: 2, size: 10 },
    });
    expect((await parse("search=%20%20")).filter).toEqual({});
    expect((await parse("order_by=%2Bname")).filter.orderBy).toEqual([{ field: "name", descending: false }]);
  });

  it("answers 422 at #/query/<name> for unknown or malformed parameters", async () => {
    expect(await pointers("/products?color=red")).toEqual(["#/query/color"]);
    expect(await pointers("/products?brand[eq]=x")).toEqual(["#/query/brand[eq]"]);
    expect(await pointers("/products?order_by=-weight_g")).toEqual(["#/query/order_by"]);
    expect(await pointers("/products?order_by=id")).toEqual(["#/query/order_by"]);
    expect(await pointers("/products?order_by=name,-name")).toEqual(["#/query/order_by"]);
    expect(await pointers("/products?order_by=")).toEqual(["#/query/order_by"]);
    expect(await pointers("/products?owner=alice")).toEqual(["#/query/owner"]);
    expect(await pointers("/products?created_at[ge]=yesterday")).toEqual(["#/query/created_at[ge]"]);
    expect(await pointers("/products?updated_at[le]=2026-05-01")).toEqual(["#/query/updated_at[le]"]);
    expect(await pointers("/products?weight_g[ge]=")).toEqual(["#/query/weight_g[ge]"]);
    expect(await pointers("/products?weight_g[le]=1e3")).toEqual(["#/query/weight_g[le]"]);
    expect(await pointers("/products?weight_g[le]=-1")).toEqual(["#/query/weight_g[le]"]);
    expect(await pointers("/products?name[ilike]=")).toEqual(["#/query/name[ilike]"]);
    expect(await pointers("/products?brand[in]=,,")).toEqual(["#/query/brand[in]"]);
    expect(await pointers(`/products?brand[in]=${Array.from({ length: 51 }, (_, i) => `b${i}`).join(",")}`)).toEqual(["#/query/brand[in]"]);
    expect(await pointers(`/products?product_type_name[in]=${"x".repeat(101)}`)).toEqual(["#/query/product_type_name[in]"]);
    expect(await pointers(`/products?search=${"a".repeat(201)}`)).toEqual(["#/query/search"]);
    expect(await pointers("/products?brand[in]=a&brand[in]=b")).toEqual(["#/query/brand[in]"]);
    expect(await pointers("/products?size=101")).toEqual(["#/query/size"]);
    expect(await pointers("/facets")).toEqual(["#/query/fields"]);
    expect(await pointers("/facets?fields=price")).toEqual(["#/query/fields/0"]);
    expect(await pointers("/facets?fields=brand&order_by=name")).toEqual(["#/query/order_by"]);
    expect(await pointers("/suggestions?search=a&brand[in]=x")).toEqual(["#/query/brand[in]"]);
  });

  it("reads facet fields given once or repeated", async () => {
    expect(await (await app.request("/facets?fields=brand")).json()).toEqual(["brand"]);
    expect(await (await app.request("/facets?fields=brand&fields=model&fields=brand")).json()).toEqual(["brand", "model"]);
    expect(await (await app.request("/suggestions")).json()).toEqual({ search: "", page: 1, size: 50 });
  });

  it("documents each bracket parameter", () => {
    const document = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
    const parameters = (document.paths?.["/products"]?.get?.parameters ?? []) as {
      name: string;
      in: string;
      description?: string;
      schema?: { type?: string; example?: unknown };
    }[];
    const names = parameters.map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "search",
        "owner",
        "name[ilike]",
        "brand[in]",
        "created_at[ge]",
        "weight_g[le]",
        "product_type_name[in]",
        "order_by",
        "page",
        "size",
      ]),
    );
    for (const parameter of parameters) {
      expect(parameter.in).toBe("query");
      expect(parameter.description, parameter.name).toBeTruthy();
      expect(parameter.schema?.example, parameter.name).toBeDefined();
    }
    const fields = (document.paths?.["/facets"]?.get?.parameters ?? []).find((p) => "name" in p && p.name === "fields") as {
      schema?: { type?: string };
    };
    expect(fields.schema?.type).toBe("array");
  });
});
