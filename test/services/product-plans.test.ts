import { env } from "cloudflare:workers";
import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { DEMO_ACCOUNT, demoStatements } from "../../scripts/seed/demo-data.mjs";
import { batchRows, createDb } from "../../src/db/client";
import {
  type CountRow,
  ftsMatchQuery,
  type OrderTerm,
  type ProductFilter,
  type ProductListRow,
  type ProductOrderField,
  productListStatements,
} from "../../src/services/products/query";
import { api, rowsRead } from "../support/http";

// The list's plans on a demo dataset (a few hundred base products with their component trees, plus
// a few with empty fields): every plan returns what the contract says (checked against a plain
// reading of the rows in TypeScript), each page reads rows in proportion to the page, not to the
// catalogue (rows read through the HTTP surface), and the indexes are the ones the builder names
// (EXPLAIN QUERY PLAN). docs/product-list.md "Plans" describes them.

const PRODUCTS = 400;

interface Base {
  id: number;
  name: string;
  brand: string | null;
  model: string | null;
  created_at: number;
  updated_at: number;
  weight_g: number | null;
  owner_id: number;
  type: string | null;
}

let rows: Base[] = [];
let demoOwner = 0;
let otherOwner = 0;
let productId = 0;

async function readAll(): Promise<Base[]> {
  const result = await env.DB.prepare(
    `SELECT p.id, p.name, p.brand, p.model, p.created_at, p.updated_at, p.weight_g, p.owner_id, pt.name AS type
     FROM products p LEFT JOIN product_types pt ON pt.id = p.product_type_id WHERE p.parent_id IS NULL`,
  ).all<Base>();
  return result.results;
}

beforeAll(async () => {
  await env.DB.batch(demoStatements({ products: PRODUCTS, seed: 11 }).map((statement) => env.DB.prepare(statement)));
  demoOwner = (await env.DB.prepare("SELECT id FROM users WHERE username = ?").bind(DEMO_ACCOUNT.username).first<{ id: number }>())!.id;
  otherOwner = (await env.DB.prepare(
    "INSERT INTO users (email, email_canonical, username) VALUES ('plans@example.org', 'plans@example.org', 'plans_owner') RETURNING id",
  ).first<{ id: number }>())!.id;
  // Empty fields (nulls sort last), names that differ in case, a second owner, equal times.
  const t = 1_790_000_000;
  const odd: [string, string | null, string | null, number | null, number][] = [
    ["apple press", null, null, null, otherOwner],
    ["Banana slicer", "zed", "Z1", 120, otherOwner],
    ["banana peeler", null, "z1", 80, demoOwner],
    ["Cherry pitter", "zed", null, null, otherOwner],
    ["cherry stoner", "Zed-lower-cased-by-the-api", "kt-100", 990, demoOwner],
  ];
  for (const [name, brand, model, weight, owner] of odd) {
    await env.DB.prepare(
      `INSERT INTO products (owner_id, name, brand, model, weight_g, created_at, updated_at, parent_id, depth) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, 0)`,
    )
      .bind(owner, name, brand?.toLowerCase() ?? null, model, weight, t, t)
      .run();
  }
  rows = await readAll();
  productId = rows.find((row) => row.owner_id === demoOwner && row.type !== null)!.id;
});

// ---------------------------------------------------------------------------------------------
// The reference: the contract's rules applied to all rows in TypeScript.

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

function compareText(a: string, b: string): number {
  const x = asciiLower(a);
  const y = asciiLower(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function keyOf(row: Base, field: ProductOrderField): string | number | null {
  return field === "product_type_name" ? row.type : row[field];
}

function sorted(list: Base[], order: readonly OrderTerm[]): Base[] {
  const idDescending = order[order.length - 1]!.descending;
  return [...list].sort((a, b) => {
    for (const { field, descending } of order) {
      const x = keyOf(a, field);
      const y = keyOf(b, field);
      if (x === null && y === null) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const c = typeof x === "string" ? compareText(x, y as string) : x - (y as number);
      if (c !== 0) return descending ? -c : c;
    }
    return idDescending ? b.id - a.id : a.id - b.id;
  });
}

async function searchIds(text: string): Promise<Set<number>> {
  const match = ftsMatchQuery(text);
  if (match === null) return new Set();
  const result = await env.DB.prepare("SELECT rowid AS id FROM products_fts WHERE products_fts MATCH ?").bind(match).all<{ id: number }>();
  return new Set(result.results.map((row) => row.id));
}

const inRange = (value: number | null, range: { ge?: number; le?: number } | undefined) =>
  range === undefined || (value !== null && (range.ge === undefined || value >= range.ge) && (range.le === undefined || value <= range.le));

async function expected(filter: ProductFilter, viewer: number | null): Promise<Base[]> {
  const found = filter.search === undefined ? null : await searchIds(filter.search);
  const contains = (value: string | null, text: string | undefined) =>
    text === undefined || (value !== null && asciiLower(value).includes(asciiLower(text)));
  const list = rows.filter(
    (row) =>
      (found === null || found.has(row.id)) &&
      (!filter.ownerMe || row.owner_id === viewer) &&
      (filter.ownerId === undefined || row.owner_id === filter.ownerId) &&
      contains(row.name, filter.nameIlike) &&
      contains(row.model, filter.modelIlike) &&
      (filter.brandIn === undefined || (row.brand !== null && filter.brandIn.includes(row.brand))) &&
      (filter.productTypeNameIn === undefined ||
        (row.type !== null && filter.productTypeNameIn.some((name) => compareText(name, row.type!) === 0))) &&
      inRange(row.created_at, filter.createdAt) &&
      inRange(row.updated_at, filter.updatedAt) &&
      inRange(row.weight_g, filter.weightG),
  );
  return sorted(list, filter.orderBy && filter.orderBy.length > 0 ? filter.orderBy : [{ field: "created_at", descending: true }]);
}

async function planned(filter: ProductFilter, viewer: number | null, page: { page: number; size: number }) {
  const { db } = createDb(env.DB);
  const [list, total] = await batchRows<[ProductListRow, CountRow]>(db, productListStatements(filter, viewer, page));
  return { ids: list.map((row) => row.id), total: total[0]!.total };
}

const FIELDS: ProductOrderField[] = ["name", "brand", "model", "created_at", "updated_at", "product_type_name"];
const EVERY_ORDER: OrderTerm[][] = [
  ...FIELDS.flatMap((field) => [[{ field, descending: false }], [{ field, descending: true }]]),
  [
    { field: "brand", descending: false },
    { field: "name", descending: true },
  ],
  [
    { field: "product_type_name", descending: true },
    { field: "model", descending: false },
  ],
  [
    { field: "brand", descending: true },
    { field: "created_at", descending: false },
  ],
  [
    { field: "brand", descending: false },
    { field: "model", descending: false },
    { field: "name", descending: true },
  ],
  [
    { field: "brand", descending: false },
    { field: "product_type_name", descending: false },
  ],
  [
    { field: "product_type_name", descending: false },
    { field: "brand", descending: true },
  ],
  [
    { field: "product_type_name", descending: false },
    { field: "updated_at", descending: true },
    { field: "name", descending: false },
  ],
];
const SOME_ORDERS: OrderTerm[][] = [
  [{ field: "name", descending: false }],
  [{ field: "created_at", descending: true }],
  [{ field: "brand", descending: true }],
  [{ field: "product_type_name", descending: false }],
  [
    { field: "brand", descending: false },
    { field: "name", descending: true },
  ],
];
// Small windows make the plans read a driver (few matches); a bigger one makes them walk the order.
const WINDOWS = [
  { page: 1, size: 7 },
  { page: 3, size: 25 },
];

describe("every plan returns the contract's page and total", () => {
  const cases = (): [string, ProductFilter, OrderTerm[][]][] => {
    const brands = [...new Set(rows.map((row) => row.brand).filter((brand): brand is string => brand !== null))].sort();
    const t = rows.map((row) => row.created_at).sort((a, b) => a - b);
    return [
      ["no filter", {}, EVERY_ORDER],
      ["one brand", { brandIn: [brands[0]!] }, EVERY_ORDER],
      ["three brands", { brandIn: brands.slice(1, 4) }, SOME_ORDERS],
      ["one type, any case", { productTypeNameIn: ["kettle"] }, EVERY_ORDER],
      ["two types", { productTypeNameIn: ["Kettle", "LAPTOP"] }, SOME_ORDERS],
      ["an owner", { ownerId: otherOwner }, EVERY_ORDER],
      ["a frequent word", { search: "kettle" }, EVERY_ORDER],
      ["a prefix matching most", { search: "d" }, SOME_ORDERS],
      ["name contains 3 characters", { nameIlike: "PRO" }, SOME_ORDERS],
      ["name contains 1 character", { nameIlike: "a" }, SOME_ORDERS],
      ["name contains nothing found", { nameIlike: "zq" }, SOME_ORDERS],
      ["model contains", { modelIlike: "kt-1" }, SOME_ORDERS],
      ["weight at least", { weightG: { ge: 1000 } }, EVERY_ORDER],
      ["weight band", { weightG: { ge: 100, le: 900 } }, SOME_ORDERS],
      ["created since", { createdAt: { ge: t[Math.floor(t.length * 0.9)]! } }, SOME_ORDERS],
      ["updated until", { updatedAt: { le: t[Math.floor(t.length * 0.2)]! } }, SOME_ORDERS],
      [
        "brand, type and weight",
        { brandIn: brands.slice(0, 3), productTypeNameIn: ["kettle", "toaster"], weightG: { ge: 900 } },
        SOME_ORDERS,
      ],
      ["word and brands", { search: "kettle", brandIn: brands }, SOME_ORDERS],
      ["owner, word and weight", { ownerId: demoOwner, search: "steel", weightG: { le: 5000 } }, SOME_ORDERS],
    ];
  };

  // One test per filter, each with its orders and windows (the cases need the seeded rows, hence the names only here).
  const labels = [
    "no filter",
    "one brand",
    "three brands",
    "one type, any case",
    "two types",
    "an owner",
    "a frequent word",
    "a prefix matching most",
    "name contains 3 characters",
    "name contains 1 character",
    "name contains nothing found",
    "model contains",
    "weight at least",
    "weight band",
    "created since",
    "updated until",
    "brand, type and weight",
    "word and brands",
    "owner, word and weight",
  ];
  for (const label of labels) {
    it(label, async () => {
      const [, filter, orders] = cases().find(([name]) => name === label)!;
      for (const orderBy of orders) {
        const want = await expected({ ...filter, orderBy }, null);
        for (const window of WINDOWS) {
          const got = await planned({ ...filter, orderBy }, null, window);
          const start = (window.page - 1) * window.size;
          const what = `${label}, order ${orderBy.map((o) => (o.descending ? "-" : "") + o.field).join(",")}, page ${window.page}x${window.size}`;
          expect(got.ids, what).toEqual(want.slice(start, start + window.size).map((row) => row.id));
          expect(got.total, what).toBe(want.length);
        }
      }
    });
  }

  it("owner=me is the viewer's, and nobody's for an anonymous viewer", async () => {
    const mine = await planned({ ownerMe: true, orderBy: [{ field: "name", descending: false }] }, otherOwner, { page: 1, size: 50 });
    expect(mine.ids).toEqual(
      (await expected({ ownerMe: true, orderBy: [{ field: "name", descending: false }] }, otherOwner)).map((r) => r.id),
    );
    expect(await planned({ ownerMe: true }, null, { page: 1, size: 50 })).toEqual({ ids: [], total: 0 });
  });

  it("orders type names equal but for case together, by id, whatever the types' order", async () => {
    // A second type whose name differs from "Kettle" only in case: the type walk would keep the two
    // types apart, so the plan sorts instead (docs/product-list.md "Plans").
    const type = (await env.DB.prepare("INSERT INTO product_types (name) VALUES ('KETTLE') RETURNING id").first<{ id: number }>())!.id;
    const t = 1_790_000_100;
    for (const name of ["Upper-case kettle one", "Upper-case kettle two"]) {
      await env.DB.prepare(
        "INSERT INTO products (owner_id, name, product_type_id, created_at, updated_at, parent_id, depth) VALUES (?, ?, ?, ?, ?, NULL, 0)",
      )
        .bind(otherOwner, name, type, t, t)
        .run();
    }
    rows = await readAll();
    try {
      for (const orderBy of [
        [{ field: "product_type_name" as const, descending: false }],
        [{ field: "product_type_name" as const, descending: true }],
      ]) {
        for (const filter of [{}, { productTypeNameIn: ["kettle"] }]) {
          const want = await expected({ ...filter, orderBy }, null);
          const start = want.findIndex((row) => row.type !== null && compareText(row.type, "kettle") === 0);
          const page = { page: Math.floor(start / 10) + 1, size: 10 };
          const got = await planned({ ...filter, orderBy }, null, page);
          expect(got.ids).toEqual(want.slice((page.page - 1) * 10, page.page * 10).map((row) => row.id));
        }
      }
    } finally {
      await env.DB.prepare("DELETE FROM products WHERE product_type_id = ?").bind(type).run();
      await env.DB.prepare("DELETE FROM product_types WHERE id = ?").bind(type).run();
      rows = await readAll();
    }
  });
});

describe("rows read per page, through the API (a cache miss each)", () => {
  // A page that read every base product would read over 400 rows here (and every record ~6,000);
  // a page read through an index reads its items (about 5 rows each: the walk, the row, its owner
  // and type, the sort) and a few dozen fixed ones (the plan's counters, the product types).
  const size = 10;
  const PAGE = 5 * size + 50;
  const page = (query: string) => `/v1/products?size=${size}${query}`;

  async function cost(path: string): Promise<number> {
    const response = await api(path);
    expect(response.status, path).toBe(200);
    expect(response.headers.get("x-cache"), path).not.toBe("hit");
    return rowsRead(response);
  }

  it("every order, each direction: the order's index, about 5 rows per item", async () => {
    for (const field of FIELDS) {
      for (const sign of ["", "-"]) {
        expect(await cost(page(`&order_by=${sign}${field}`)), `${sign}${field}`).toBeLessThanOrEqual(PAGE);
      }
    }
    // Two terms: each brand's (or type's) products in the second term's order, not a brand sorted whole.
    for (const order of ["brand,-name", "-brand,updated_at", "product_type_name,-model"]) {
      expect(await cost(page(`&order_by=${order}`)), order).toBeLessThanOrEqual(PAGE);
    }
    // The fifth page walks the four before it (index entries only), then reads its own rows.
    expect(await cost(page("&page=5"))).toBeLessThanOrEqual(4 * size + PAGE);
  });

  it("a brand, a type or an owner under any order: the pair's index", async () => {
    const brand = rows.find((row) => row.brand !== null)!.brand!;
    for (const field of FIELDS) {
      expect(await cost(page(`&brand%5Bin%5D=${encodeURIComponent(brand)}&order_by=-${field}`)), `brand, ${field}`).toBeLessThanOrEqual(
        PAGE,
      );
      expect(await cost(page(`&product_type_name%5Bin%5D=kettle&order_by=${field}`)), `type, ${field}`).toBeLessThanOrEqual(PAGE);
      expect(await cost(`/v1/users/${demoOwner}/products?size=${size}&order_by=${field}`), `owner, ${field}`).toBeLessThanOrEqual(PAGE);
    }
  });

  it("search, ranges and substrings: their matches (a few reads each) and the page, not the catalogue", async () => {
    const kettles = (await searchIds("kettle")).size;
    expect(await cost(page("&search=kettle"))).toBeLessThanOrEqual(6 * kettles + PAGE);
    const heavy = rows.filter((row) => row.weight_g !== null && row.weight_g >= 5000).length;
    expect(await cost(page("&weight_g%5Bge%5D=5000&order_by=name"))).toBeLessThanOrEqual(6 * heavy + PAGE);
    const pro = rows.filter((row) => asciiLower(row.name).includes("pro")).length;
    expect(await cost(page("&name%5Bilike%5D=pro&order_by=-updated_at"))).toBeLessThanOrEqual(6 * pro + PAGE);
  });

  it("facets, suggestions and statistics read counters", async () => {
    expect(await cost("/v1/products/facets?fields=brand&fields=model&fields=product_type_name")).toBeLessThanOrEqual(3 * 50 + 10);
    expect(await cost("/v1/products/suggestions/brands?search=n&size=5")).toBeLessThanOrEqual(20);
    expect(await cost("/v1/products/suggestions/models?search=k&size=5")).toBeLessThanOrEqual(20);
    expect(await cost("/v1/products/suggestions/models?size=5")).toBeLessThanOrEqual(20);
    expect(await cost("/v1/stats/totals")).toBeLessThanOrEqual(10);
    expect(await cost("/v1/stats/categories?scope=all")).toBeLessThanOrEqual(100);
    // A row per day with data in the range (the default year of months), whatever the catalogue's size.
    const days = new Set(rows.map((row) => Math.floor(row.created_at / 86_400))).size;
    expect(await cost("/v1/stats/series?granularity=month")).toBeLessThanOrEqual(days + 100);
  });

  it("a product's components, tree and images read that product's rows", async () => {
    expect(await cost(`/v1/products/${productId}/components?size=10`)).toBeLessThanOrEqual(60);
    expect(await cost(`/v1/products/${productId}/components/tree?recursion_depth=10`)).toBeLessThanOrEqual(200);
    expect(await cost(`/v1/products/${productId}/images`)).toBeLessThanOrEqual(10);
  });
});

describe("plans (EXPLAIN QUERY PLAN)", () => {
  const dialect = new SQLiteAsyncDialect();
  async function plan(query: SQL): Promise<string[]> {
    const { sql: text, params } = dialect.sqlToQuery(query);
    const result = await env.DB.prepare(`EXPLAIN QUERY PLAN ${text}`)
      .bind(...params)
      .all<{ detail: string }>();
    return result.results.map((row) => row.detail);
  }
  const window = { page: 1, size: 50 };
  // A scan of products with no index: every base product (or record) read for one page.
  const fullScans = (steps: string[]) => steps.filter((step) => /^SCAN (p|products)\b(?! USING)/.test(step));
  // The page's rows are put in order once more after their join (at most a page); any other sort is one the index should have spared.
  const sorts = (steps: string[]) =>
    steps.filter((step) => step.includes("TEMP B-TREE FOR ORDER BY") || step.includes("RIGHT PART OF ORDER BY"));
  const ORDER_INDEX: Record<Exclude<ProductOrderField, "product_type_name">, string> = {
    created_at: "products_base_created_idx",
    updated_at: "products_base_updated_idx",
    name: "products_base_name_idx",
    brand: "products_base_brand_idx",
    model: "products_base_model_idx",
  };

  it("walk the order's index without sorting, and count from the counters", async () => {
    for (const [field, index] of Object.entries(ORDER_INDEX)) {
      for (const descending of [false, true]) {
        const [page, total] = productListStatements({ orderBy: [{ field: field as ProductOrderField, descending }] }, null, window);
        const steps = await plan(page);
        expect(steps, field).toContainEqual(expect.stringMatching(new RegExp(`^SCAN p USING (COVERING )?INDEX ${index}\\b`)));
        expect(fullScans(steps), field).toEqual([]);
        expect(sorts(steps), field).toHaveLength(1);
        const counted = await plan(total);
        expect(counted.join("\n")).not.toMatch(/\bproducts\b/);
        expect(counted).toContainEqual(expect.stringMatching(/catalogue_totals/));
      }
    }
  });

  it("walk the types in name order for product_type_name, each type's products by id", async () => {
    for (const descending of [false, true]) {
      const [page] = productListStatements({ orderBy: [{ field: "product_type_name", descending }] }, null, window);
      const steps = await plan(page);
      expect(steps).toContainEqual(expect.stringMatching(/^SCAN pt USING COVERING INDEX product_types_name_nocase_idx/));
      expect(steps).toContainEqual(expect.stringMatching(/^SEARCH p USING INDEX products_base_type_idx \(product_type_id=\?\)/));
      expect(fullScans(steps)).toEqual([]);
    }
  });

  it("walk each brand's or type's products in a second term's order, without sorting a group", async () => {
    const cases: [ProductFilter, string][] = [
      [
        {
          orderBy: [
            { field: "brand", descending: false },
            { field: "name", descending: true },
          ],
        },
        "products_base_brand_name_idx (brand=?)",
      ],
      [
        {
          orderBy: [
            { field: "brand", descending: true },
            { field: "updated_at", descending: false },
          ],
        },
        "products_base_brand_updated_idx (brand=?)",
      ],
      [
        {
          brandIn: ["norvik", "orbis"],
          orderBy: [
            { field: "brand", descending: false },
            { field: "model", descending: true },
          ],
        },
        "products_base_brand_model_idx (brand=?)",
      ],
      [
        {
          orderBy: [
            { field: "product_type_name", descending: false },
            { field: "model", descending: true },
          ],
        },
        "products_base_type_model_idx (product_type_id=?)",
      ],
    ];
    for (const [filter, index] of cases) {
      const [page] = productListStatements(filter, null, window);
      const steps = await plan(page);
      const what = JSON.stringify(filter);
      expect(steps.join("\n"), what).toContain(`SEARCH p USING INDEX ${index}`);
      expect(fullScans(steps), what).toEqual([]);
      // Only the page's own re-order after its join (and under a type order the arm that sorts instead
      // while two type names differ only in case, which SQLite skips otherwise).
      expect(sorts(steps), what).toHaveLength(filter.orderBy![0]!.field === "product_type_name" ? 2 : 1);
    }
  });

  it("seek a brand's, a type's or an owner's index in the order, without sorting them", async () => {
    const cases: [ProductFilter, string][] = [
      [{ brandIn: ["norvik"], orderBy: [{ field: "name", descending: false }] }, "products_base_brand_name_idx (brand=?)"],
      [{ brandIn: ["norvik", "orbis"], orderBy: [{ field: "updated_at", descending: true }] }, "products_base_brand_updated_idx (brand=?)"],
      [
        { productTypeNameIn: ["kettle"], orderBy: [{ field: "model", descending: true }] },
        "products_base_type_model_idx (product_type_id=?)",
      ],
      [{ ownerId: 1, orderBy: [{ field: "brand", descending: false }] }, "products_base_owner_brand_idx (owner_id=?)"],
      [{ ownerId: 1 }, "products_base_owner_idx (owner_id=?)"],
    ];
    for (const [filter, index] of cases) {
      const [page, total] = productListStatements(filter, null, window);
      const steps = await plan(page);
      expect(steps.join("\n")).toContain(`SEARCH p USING INDEX ${index}`);
      expect(fullScans(steps)).toEqual([]);
      // One value: no sort; a list (types are a list of ids): each value's rows in order, merged by a
      // sort that SQLite stops after the window for each value.
      expect(sorts(steps)).toHaveLength(filter.brandIn?.length === 2 || filter.productTypeNameIn ? 2 : 1);
      expect((await plan(total)).join("\n")).not.toMatch(/SCAN p\b/);
    }
  });

  it("count a brand and a type together through their pair index, not a whole brand", async () => {
    const filter: ProductFilter = { brandIn: ["norvik"], productTypeNameIn: ["kettle"], weightG: { ge: 1 } };
    for (const orderBy of [[{ field: "name", descending: false }], []] as OrderTerm[][]) {
      const [, total] = productListStatements({ ...filter, orderBy }, null, window);
      const steps = await plan(total);
      expect(steps.join("\n")).toContain("SEARCH p USING INDEX products_base_type_brand_idx (product_type_id=? AND brand=?)");
      expect(fullScans(steps)).toEqual([]);
    }
  });

  it("read the full-text, trigram and range indexes a filter names, and count through them", async () => {
    const cases: [ProductFilter, RegExp][] = [
      [{ search: "kettle", orderBy: [{ field: "name", descending: false }] }, /products_fts VIRTUAL TABLE/],
      [{ nameIlike: "kettle" }, /products_trigram_lower VIRTUAL TABLE/],
      [{ nameIlike: "k" }, /products_trigram_lower_terms VIRTUAL TABLE/],
      [{ nameIlike: "k" }, /SEARCH p USING INDEX products_base_name_last_idx/],
      [{ nameIlike: "zq" }, /SEARCH p USING INDEX products_base_name_end_idx/],
      [{ modelIlike: "zq" }, /SEARCH p USING INDEX products_base_model_end_idx/],
      [{ nameIlike: "é" }, /products_trigram_lower_terms VIRTUAL TABLE/],
      // The last character, which has no successor to bound its terms: the name index is read whole.
      [{ nameIlike: "\u{10FFFF}" }, /USING (COVERING )?INDEX products_base_name_idx/],
      [{ weightG: { ge: 10 } }, /USING (COVERING )?INDEX products_base_weight_idx \(weight_g>\?\)/],
      [{ createdAt: { ge: 10 } }, /SEARCH p USING INDEX products_base_created_idx \(created_at>\?\)/],
    ];
    for (const [filter, step] of cases) {
      const [page, total] = productListStatements(filter, null, window);
      const steps = await plan(page);
      expect(steps).toContainEqual(expect.stringMatching(step));
      expect(fullScans(steps)).toEqual([]);
      expect(fullScans(await plan(total))).toEqual([]);
    }
  });
});
