import { type SQL, sql } from "drizzle-orm";
import type { PageQuery } from "../../lib/pagination";
import { pageWindow } from "../../lib/pagination";
import { checkColumn, type QualityCheckCode } from "../../lib/record-quality";
import type { RecordRow } from "./records";

/**
 * The query builder behind the product list, its export, facets and suggestions
 * (decisions.md, Products; docs/product-list.md). It only builds statements: the caller runs
 * them, usually several in one round trip with `batchRows`.
 *
 * Every list of values is bound as ONE JSON text and read back with `json_each`, so a query binds
 * the same handful of parameters however long the lists are, far below D1's 100.
 */

/** Fields the list can be ordered by. */
export const PRODUCT_ORDER_FIELDS = ["name", "brand", "model", "created_at", "updated_at", "product_type_name"] as const;
export type ProductOrderField = (typeof PRODUCT_ORDER_FIELDS)[number];

/** Fields `GET /v1/products/facets` counts values of. */
export const PRODUCT_FACET_FIELDS = ["brand", "model", "product_type_name"] as const;
export type ProductFacetField = (typeof PRODUCT_FACET_FIELDS)[number];

/** Limits of the list parameters; the query schema enforces them, docs/product-list.md lists them. */
export const PRODUCT_QUERY_LIMITS = {
  /** Values in one `[in]` list. */
  inValues: 50,
  /** Characters of one `[in]` value, an `[ilike]` pattern or a suggestion prefix. */
  valueLength: 100,
  /** Characters of `search`. */
  searchLength: 200,
  /** Values per facet field. */
  facetValues: 50,
} as const;

export interface OrderTerm {
  field: ProductOrderField;
  descending: boolean;
}

/** `-created_at`: newest first. */
export const DEFAULT_PRODUCT_ORDER: readonly OrderTerm[] = [{ field: "created_at", descending: true }];

/** An inclusive range; either end may be open. */
export interface Range {
  ge?: number;
  le?: number;
}

/**
 * What the list, export and facets filter on: the validated query in plain values. Absent
 * members do not filter. Times are unix seconds, like the columns.
 */
export interface ProductFilter {
  /** User text for the full-text index; made safe by `ftsMatchQuery`. */
  search?: string;
  /** Only the viewer's own products. */
  ownerMe?: boolean;
  /** Only the products of this user (`GET /v1/users/{user_id}/products`); whether the viewer may see them is the route's rule. */
  ownerId?: number;
  /** Case-insensitive substring of the name (ASCII letters only fold case, see docs). */
  nameIlike?: string;
  /** Brands, lower-case like the stored ones. */
  brandIn?: string[];
  modelIlike?: string;
  createdAt?: Range;
  updatedAt?: Range;
  weightG?: Range;
  /** Product type names, compared case-insensitively (ASCII). */
  productTypeNameIn?: string[];
  /** `quality_score[lt]` and `quality_score[ge]` (docs/quality.md). */
  qualityScore?: { lt?: number; ge?: number };
  /** Records failing any of these checks. */
  qualityFailIn?: QualityCheckCode[];
  /** Sort terms before the `id` tie-breaker; `DEFAULT_PRODUCT_ORDER` when absent or empty. */
  orderBy?: readonly OrderTerm[];
}

/** One row of the list and of the export: the record as the detail reads select it (owner name and visibility, type name). */
export type ProductListRow = RecordRow;

/** The row of a count statement. */
export interface CountRow {
  total: number;
}

/** One value of a facet or a suggestion list. */
export interface FacetValue {
  value: string;
  count: number;
}

/** Where the export resumes: the last row of the previous chunk (any `ProductListRow` will do). */
export type ProductExportCursor = Pick<ProductListRow, "id" | ProductOrderField>;

interface OrderColumn {
  /** SQL of the sort key; text keys compare with NOCASE so `apple` and `Banana` sort by letter. */
  expr: SQL;
  /** Nullable keys sort their nulls last in both directions. */
  nullable: boolean;
  /** The same key read from a row of `productExportRoots` (alias `c`), to order the roots again. */
  rootExpr: SQL;
}

function orderColumn(column: string, source: "p" | "pt", text: boolean, nullable: boolean, field: ProductOrderField): OrderColumn {
  const collate = text ? " COLLATE NOCASE" : "";
  return { expr: sql.raw(`${source}.${column}${collate}`), nullable, rootExpr: sql.raw(`c.${field}${collate}`) };
}

const ORDER_COLUMNS: Record<ProductOrderField, OrderColumn> = {
  name: orderColumn("name", "p", true, false, "name"),
  brand: orderColumn("brand", "p", true, true, "brand"),
  model: orderColumn("model", "p", true, true, "model"),
  created_at: orderColumn("created_at", "p", false, false, "created_at"),
  updated_at: orderColumn("updated_at", "p", false, false, "updated_at"),
  product_type_name: orderColumn("name", "pt", true, true, "product_type_name"),
};

const FACET_COLUMNS: Record<ProductFacetField, SQL> = {
  brand: sql.raw("p.brand"),
  model: sql.raw("p.model"),
  product_type_name: sql.raw("pt.name"),
};

const ROW_COLUMNS = sql.raw(
  [
    "p.id, p.parent_id, p.owner_id, p.name, p.description, p.brand, p.model, p.weight_g, p.height_cm,",
    "p.width_cm, p.depth_cm, p.volume_cm3, p.circularity_properties, p.product_type_id,",
    "p.amount_in_parent, p.depth, p.version, p.created_at, p.updated_at, p.quality_score,",
    "u.username AS owner_username, u.profile_visibility AS owner_visibility, pt.name AS product_type_name",
  ].join(" "),
);

const ROW_JOINS = sql.raw("JOIN users u ON u.id = p.owner_id LEFT JOIN product_types pt ON pt.id = p.product_type_id");

/**
 * Partial indexes over base products (`WHERE parent_id IS NULL`, which every filter has, so
 * SQLite can always use them). D1 keeps no statistics, and without them the planner prefers the
 * equality `parent_id IS NULL` on `products_parent_idx`: it visits every base product and sorts
 * them for the page. `listIndex` names the index to read instead for the cases it knows.
 */
type BaseIndex = "products_base_created_idx" | "products_base_brand_created_idx" | "products_base_quality_idx";

/**
 * The index the list's page (`order`) or count (`order` null) reads `p` through, or null to let
 * the planner choose: full-text search drives from the FTS rowids and `owner=me` (or one user's
 * list, `ownerId`) from `products_owner_idx`, both narrower. A brand list seeks
 * `(brand, parent_id, created_at)` per brand (one brand under `-created_at`/`created_at` needs no sort; its plain count reads the index
 * alone, `parent_id` being in it). Otherwise the default order walks `created_at` and stops at the
 * page. A count without brand keeps the planner's covering `products_parent_idx` search unless a
 * `created_at` range narrows it. Other orders with no brand gain nothing from either index.
 */
function listIndex(filter: ProductFilter, order: readonly OrderTerm[] | null): BaseIndex | null {
  if (filter.search !== undefined || filter.ownerMe || filter.ownerId !== undefined) return null;
  if (filter.brandIn && filter.brandIn.length > 0) return "products_base_brand_created_idx";
  const walksCreated = order === null ? filter.createdAt !== undefined : order[0]?.field === "created_at";
  if (walksCreated) return "products_base_created_idx";
  // A quality filter bounds `quality_score` (a failing check implies a score below 1): its index
  // holds only the matching range, and counts it without reading the rows.
  return filter.qualityScore || filter.qualityFailIn ? "products_base_quality_idx" : null;
}

function productsAs(index: BaseIndex | null): SQL {
  return sql.raw(index ? `products p INDEXED BY ${index}` : "products p");
}

/**
 * Turns user text into an FTS5 query that can only mean "all these words": each
 * whitespace-separated term becomes a quoted string (inner quotes doubled), so `OR`, `NEAR(`,
 * `*`, `-`, `:` and `^` are text, never syntax; the last term matches as a prefix. Terms without
 * a letter or digit would index to nothing and are dropped; control characters (a NUL would end
 * the string early and leave a quote open) become spaces. Null when no term is left.
 */
export function ftsMatchQuery(text: string): string | null {
  const terms = text
    .replace(/\p{Cc}/gu, " ")
    .split(/\s+/u)
    .filter((term) => /[\p{L}\p{N}\p{Co}]/u.test(term));
  if (terms.length === 0) return null;
  return terms.map((term, i) => `"${term.replaceAll('"', '""')}"${i === terms.length - 1 ? "*" : ""}`).join(" ");
}

// Text filters compare `lower()`ed text (`instr`, `substr`), not LIKE: D1 refuses a LIKE pattern
// over 50 bytes ("LIKE or GLOB pattern too complex"), and a filter of 100 characters takes up to
// 400 bytes of UTF-8 once escaped. `lower()` folds ASCII letters as LIKE does, and `%`, `_` and
// `\` are plain characters without any escaping. No index served these LIKEs either (the columns
// are not NOCASE), so no plan changes.

/** "`column` contains `text`", ASCII letters in any case. */
export function containsText(column: SQL, text: string): SQL {
  return sql`instr(lower(${column}), lower(${text})) > 0`;
}

/**
 * "`column` starts with `text`", ASCII letters in any case; an empty `text` matches every value.
 * Only the head of each value is lowered and compared (about as fast as a LIKE prefix, where
 * `instr` would read every value whole).
 */
export function startsWithText(column: SQL, text: string): SQL {
  return sql`lower(substr(${column}, 1, length(${text}))) = lower(${text})`;
}

function inJson(column: SQL, values: readonly string[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
}

/** One value as an equality, which an index ordered by the next column can also return in order. */
function inValues(column: SQL, values: readonly string[]): SQL {
  return values.length === 1 ? sql`${column} = ${values[0]}` : inJson(column, values);
}

function rangeConditions(column: SQL, range: Range | undefined): SQL[] {
  const out: SQL[] = [];
  if (range?.ge !== undefined) out.push(sql`${column} >= ${range.ge}`);
  if (range?.le !== undefined) out.push(sql`${column} <= ${range.le}`);
  return out;
}

/** The conditions of `filter` over base products (`p`, and `pt` when the filter names a type). */
function filterConditions(filter: ProductFilter, viewerId: number | null): SQL[] {
  const where: SQL[] = [sql`p.parent_id IS NULL`];
  if (filter.search !== undefined) {
    const match = ftsMatchQuery(filter.search);
    // Text with no word in it cannot match any indexed word.
    where.push(match === null ? sql`0` : sql`p.id IN (SELECT rowid FROM products_fts WHERE products_fts MATCH ${match})`);
  }
  // An anonymous `owner=me` matches nothing (the route answers 401 before it gets here).
  if (filter.ownerMe) where.push(viewerId === null ? sql`0` : sql`p.owner_id = ${viewerId}`);
  if (filter.ownerId !== undefined) where.push(sql`p.owner_id = ${filter.ownerId}`);
  if (filter.nameIlike !== undefined) where.push(containsText(sql.raw("p.name"), filter.nameIlike));
  if (filter.modelIlike !== undefined) where.push(containsText(sql.raw("p.model"), filter.modelIlike));
  if (filter.brandIn) where.push(inValues(sql.raw("p.brand"), filter.brandIn));
  if (filter.productTypeNameIn) where.push(inJson(sql.raw("pt.name COLLATE NOCASE"), filter.productTypeNameIn));
  where.push(...rangeConditions(sql.raw("p.created_at"), filter.createdAt));
  where.push(...rangeConditions(sql.raw("p.updated_at"), filter.updatedAt));
  where.push(...rangeConditions(sql.raw("p.weight_g"), filter.weightG));
  where.push(...qualityConditions(filter));
  return where;
}

/**
 * `quality_score[lt|ge]` as a range of `quality_score`, and `quality_fail[in]` as "any of these
 * checks is 0", with the range it implies (`quality_score < 1`) for the index to narrow on.
 */
function qualityConditions(filter: ProductFilter): SQL[] {
  const out: SQL[] = [];
  const { lt, ge } = filter.qualityScore ?? {};
  if (ge !== undefined) out.push(sql`p.quality_score >= ${ge}`);
  const fails = filter.qualityFailIn ?? [];
  const below = fails.length > 0 ? Math.min(lt ?? 1, 1) : lt;
  if (below !== undefined) out.push(sql`p.quality_score < ${below}`);
  if (fails.length > 0) {
    // Column names from the fixed list of codes, never from the request's text.
    out.push(
      sql`(${sql.join(
        fails.map((code) => sql`${sql.raw(`p.${checkColumn(code)}`)} = 0`),
        sql` OR `,
      )})`,
    );
  }
  return out;
}

function whereSql(conditions: SQL[]): SQL {
  return sql.join(conditions, sql` AND `);
}

function effectiveOrder(filter: ProductFilter): readonly OrderTerm[] {
  return filter.orderBy && filter.orderBy.length > 0 ? filter.orderBy : DEFAULT_PRODUCT_ORDER;
}

/** The tie-breaker `id` runs in the direction of the last term, so `-created_at` lists same-second rows newest first. */
function idDescending(order: readonly OrderTerm[]): boolean {
  return order[order.length - 1]?.descending ?? true;
}

/** `ORDER BY` terms over `p`/`pt`, or over a row of `productExportRoots` (alias `c`) when `overRoots`. */
function orderBySql(order: readonly OrderTerm[], overRoots = false): SQL {
  const terms = order.map(({ field, descending }) => {
    const column = ORDER_COLUMNS[field];
    const expr = overRoots ? column.rootExpr : column.expr;
    return sql`${expr} ${sql.raw(descending ? "DESC" : "ASC")}${sql.raw(column.nullable ? " NULLS LAST" : "")}`;
  });
  terms.push(sql.raw(`${overRoots ? "c" : "p"}.id ${idDescending(order) ? "DESC" : "ASC"}`));
  return sql.join(terms, sql`, `);
}

function countFrom(filter: ProductFilter): SQL {
  const products = productsAs(listIndex(filter, null));
  // The type join is only paid for when the filter reads the type's name.
  return filter.productTypeNameIn ? sql`${products} LEFT JOIN product_types pt ON pt.id = p.product_type_id` : products;
}

/**
 * The page of base products matching `filter`, and their total: run both with `batchRows` for
 * one round trip (`batchRows<[ProductListRow, CountRow]>`). `viewerId` is the signed-in user or
 * null; it only matters for `ownerMe`.
 */
export function productListStatements(filter: ProductFilter, viewerId: number | null, page: PageQuery): [rows: SQL, total: SQL] {
  const where = whereSql(filterConditions(filter, viewerId));
  const order = effectiveOrder(filter);
  const { limit, offset } = pageWindow(page);
  const source = sql`${productsAs(listIndex(filter, order))} ${ROW_JOINS}`;
  return [
    sql`SELECT ${ROW_COLUMNS} FROM ${source} WHERE ${where} ORDER BY ${orderBySql(order)} LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM ${countFrom(filter)} WHERE ${where}`,
  ];
}

/**
 * Rows strictly after `cursor` in the order `order` (nulls last, then the `id` tie-breaker):
 * "equal on the first i-1 keys and after on key i", for each i. A null cursor key has nothing
 * after it but other nulls, which the next keys decide.
 */
function afterCursor(order: readonly OrderTerm[], cursor: ProductExportCursor): SQL {
  // A plain bound on the first key as well, when it has one: SQLite cannot seek an index from the
  // OR below, and without the bound each chunk would walk the index from its start again.
  const first = order[0] ? ORDER_COLUMNS[order[0].field] : undefined;
  const firstValue = order[0] ? cursor[order[0].field] : null;
  const bound =
    first && !first.nullable && firstValue !== null
      ? sql`${first.expr} ${sql.raw(order[0]!.descending ? "<=" : ">=")} ${firstValue} AND `
      : sql``;
  const disjuncts: SQL[] = [];
  const equalSoFar: SQL[] = [];
  for (const { field, descending } of order) {
    const { expr, nullable } = ORDER_COLUMNS[field];
    const value = cursor[field];
    if (value !== null) {
      const beyond = sql`${expr} ${sql.raw(descending ? "<" : ">")} ${value}`;
      disjuncts.push(whereSql([...equalSoFar, nullable ? sql`(${beyond} OR ${expr} IS NULL)` : beyond]));
      equalSoFar.push(sql`${expr} = ${value}`);
    } else {
      equalSoFar.push(sql`${expr} IS NULL`);
    }
  }
  disjuncts.push(whereSql([...equalSoFar, sql`p.id ${sql.raw(idDescending(order) ? "<" : ">")} ${cursor.id}`]));
  return sql`(${bound}(${sql.join(
    disjuncts.map((d) => sql`(${d})`),
    sql` OR `,
  )}))`;
}

function exportWhere(filter: ProductFilter, viewerId: number | null, after: ProductExportCursor | null): SQL {
  const conditions = filterConditions(filter, viewerId);
  if (after) conditions.push(afterCursor(effectiveOrder(filter), after));
  return whereSql(conditions);
}

/** Columns of a `productExportRoots` row: the id and every sort key, named like the fields. */
const ROOT_COLUMNS = sql.raw("p.id, p.name, p.brand, p.model, p.created_at, p.updated_at, pt.name AS product_type_name");

/**
 * One chunk of the list export, as a sub-select of the ids and sort keys only: up to `limit`
 * base products matching `filter`, in the list's order (the filter's `orderBy`, default
 * `-created_at`, then `id`), strictly after `after` (the last row of the previous chunk; null for
 * the first). Keyset paging, so chunks neither skip nor repeat rows when others are added or
 * removed meanwhile. `product-export.ts` reads each root's whole tree around it and orders the
 * roots again with `productExportRootOrder` over alias `c`.
 */
export function productExportRoots(filter: ProductFilter, viewerId: number | null, after: ProductExportCursor | null, limit: number): SQL {
  const order = effectiveOrder(filter);
  const source = sql`${productsAs(listIndex(filter, order))} LEFT JOIN product_types pt ON pt.id = p.product_type_id`;
  return sql`SELECT ${ROOT_COLUMNS} FROM ${source} WHERE ${exportWhere(filter, viewerId, after)} ORDER BY ${orderBySql(order)} LIMIT ${limit}`;
}

/** The list's order over rows of `productExportRoots` named `c` (for a window's `ORDER BY`). */
export function productExportRootOrder(filter: ProductFilter): SQL {
  return orderBySql(effectiveOrder(filter), true);
}

/** One base product as a `productExportRoots` row (the single-product export), or nothing when `id` is a component or unknown. */
export function productExportRoot(id: number): SQL {
  return sql`SELECT ${ROOT_COLUMNS} FROM products p LEFT JOIN product_types pt ON pt.id = p.product_type_id
    WHERE p.id = ${id} AND p.parent_id IS NULL`;
}

/**
 * One statement per field of `fields` (in that order): the field's values over the base
 * products matching `filter`, most frequent first (ties by value), nulls left out, at most
 * `PRODUCT_QUERY_LIMITS.facetValues`. Run them with `batchRows<FacetValue[]>` and shape the
 * answer with `facetsFromRows`.
 */
export function facetStatements(filter: ProductFilter, fields: readonly ProductFacetField[], viewerId: number | null = null): SQL[] {
  const conditions = filterConditions(filter, viewerId);
  return fields.map((field) => {
    const column = FACET_COLUMNS[field];
    const from =
      field === "product_type_name" || filter.productTypeNameIn
        ? sql.raw("products p LEFT JOIN product_types pt ON pt.id = p.product_type_id")
        : sql.raw("products p");
    return sql`SELECT ${column} AS value, count(*) AS count FROM ${from}
      WHERE ${whereSql([...conditions, sql`${column} IS NOT NULL`])}
      GROUP BY ${column} ORDER BY count DESC, value ASC LIMIT ${PRODUCT_QUERY_LIMITS.facetValues}`;
  });
}

/** `{brand: [{value, count}], ...}` from the rows of `facetStatements(filter, fields)`. */
export function facetsFromRows(
  fields: readonly ProductFacetField[],
  rows: readonly FacetValue[][],
): Partial<Record<ProductFacetField, FacetValue[]>> {
  return Object.fromEntries(fields.map((field, i) => [field, rows[i] ?? []]));
}

/**
 * Autocomplete for brand or model: the distinct values that start with `search` (ASCII letters
 * case-insensitive; brands are stored lower-case, so the prefix is lower-cased for them), over
 * every record, base products and components alike, since a value typed for one is a good
 * suggestion for the other. Most used first, then by value; one page and the total, for
 * `batchRows<[FacetValue, CountRow]>`. An empty `search` suggests every value.
 */
export function suggestionStatements(kind: "brands" | "models", search: string, page: PageQuery): [rows: SQL, total: SQL] {
  const column = sql.raw(kind === "brands" ? "brand" : "model");
  const prefix = kind === "brands" ? search.toLowerCase() : search;
  const where = sql`${column} IS NOT NULL AND ${startsWithText(column, prefix)}`;
  const { limit, offset } = pageWindow(page);
  return [
    sql`SELECT ${column} AS value, count(*) AS count FROM products WHERE ${where}
      GROUP BY ${column} ORDER BY count DESC, value ASC LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(DISTINCT ${column}) AS total FROM products WHERE ${where}`,
  ];
}
