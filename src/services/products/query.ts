import { type SQL, sql } from "drizzle-orm";
import type { PageQuery } from "../../lib/pagination";
import { pageWindow, TOTAL_LIMIT } from "../../lib/pagination";
import { checkColumn, type QualityCheckCode } from "../../lib/record-quality";
import { type RecordRow, recordColumns, recordJoins } from "./records";

/**
 * The query builder behind the product list, its export, facets and suggestions
 * (decisions.md, Products; docs/product-list.md). It only builds statements: the caller runs
 * them, usually several in one round trip with `batchRows`.
 *
 * Every value a statement needs is bound as ONE JSON text (the `args` common table expression)
 * and read back with `json_extract`/`json_each`, so a statement binds one parameter however many
 * filters and plans it holds, far below D1's 100.
 *
 * D1 keeps no planner statistics, so the statements choose their own plans (docs/product-list.md
 * "Plans"): a page walks the index of its order and stops when the page is full, unless a filter
 * that an index can drive matches so few base products that reading them all and sorting costs
 * less; the counters kept by triggers (migration 0024) and bounded counts tell which, inside the
 * statement. Totals come from those counters, or are counted up to `TOTAL_LIMIT + 1`.
 *
 * Raw: every statement here is composed from parts (plans, arms chosen at run time by a `plan`
 * row, JSON arguments, `INDEXED BY`), which the query builder cannot express.
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
  /** Matching base products facets under a filter count at most: the newest ones (docs/product-list.md, Facets). */
  facetSample: 1000,
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

/** The row of a count statement: at most `TOTAL_LIMIT + 1` (more than `TOTAL_LIMIT` means "at least"). */
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

// ---------------------------------------------------------------------------------------------
// Bound values

/**
 * The values of one statement family, bound once as a JSON text. `value` and `list` return SQL
 * that reads a value back from the statement's `args` row, which `withArgs` puts in front; the
 * same SQL may appear in several statements, as long as each starts with `withArgs`.
 */
class Args {
  private readonly values: Record<string, unknown> = {};
  private next = 0;

  value(value: string | number): SQL {
    return sql.raw(`json_extract((SELECT v FROM args), '$.${this.key(value)}')`);
  }

  /** The values as a sub-select (`x IN <list>`). */
  list(values: readonly string[]): SQL {
    return sql.raw(`(SELECT value FROM json_each((SELECT v FROM args), '$.${this.key(values)}'))`);
  }

  /** `WITH args(v) AS (...)`, and the statement's other common table expressions, before `body`. */
  withArgs(body: SQL, ctes: SQL[] = [], recursive = false): SQL {
    const all = [sql`args(v) AS (SELECT ${JSON.stringify(this.values)})`, ...ctes];
    return sql`WITH ${sql.raw(recursive ? "RECURSIVE " : "")}${sql.join(all, sql`, `)} ${body}`;
  }

  private key(value: unknown): string {
    const key = `a${this.next++}`;
    this.values[key] = value;
    return key;
  }
}

/** An integer the code computed itself (a limit, an offset), written into the SQL text. */
function int(value: number): SQL {
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`not a non-negative integer: ${value}`);
  return sql.raw(String(value));
}

// ---------------------------------------------------------------------------------------------
// Order

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

/**
 * Partial indexes over base products (`WHERE parent_id IS NULL`, which every statement has), one
 * per order of the list: walked in the order's direction they return the page without a sort
 * (the `id` tie-breaker is each index's last column; SQLite walks a nullable key's non-null
 * entries first when the order puts its nulls last). `product_type_name` has none: its walk goes
 * through the types in name order (`typeWalk`).
 */
const ORDER_INDEX: Record<ProductOrderField, string | null> = {
  created_at: "products_base_created_idx",
  updated_at: "products_base_updated_idx",
  name: "products_base_name_idx",
  brand: "products_base_brand_idx",
  model: "products_base_model_idx",
  product_type_name: null,
};

function effectiveOrder(filter: ProductFilter): readonly OrderTerm[] {
  return filter.orderBy && filter.orderBy.length > 0 ? filter.orderBy : DEFAULT_PRODUCT_ORDER;
}

/** The tie-breaker `id` runs in the direction of the last term, so `-created_at` lists same-second rows newest first. */
function idDescending(order: readonly OrderTerm[]): boolean {
  return order[order.length - 1]?.descending ?? true;
}

const direction = (descending: boolean) => sql.raw(descending ? "DESC" : "ASC");

function termSql({ field, descending }: OrderTerm, overRoots = false): SQL {
  const column = ORDER_COLUMNS[field];
  return sql`${overRoots ? column.rootExpr : column.expr} ${direction(descending)}${sql.raw(column.nullable ? " NULLS LAST" : "")}`;
}

/** `ORDER BY` terms over `p`/`pt`, or over a row of `productExportRoots` (alias `c`) when `overRoots`. */
function orderBySql(order: readonly OrderTerm[], overRoots = false): SQL {
  const terms = order.map((term) => termSql(term, overRoots));
  terms.push(sql.raw(`${overRoots ? "c" : "p"}.id ${idDescending(order) ? "DESC" : "ASC"}`));
  return sql.join(terms, sql`, `);
}

// ---------------------------------------------------------------------------------------------
// Filters

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

/** Shortest `[ilike]` text the trigram index can find: three characters make one trigram. */
const TRIGRAM_MIN = 3;

/**
 * Characters the trigram index stores as U+FFFD (FTS5 reads U+FFFE and U+FFFF so): for text holding
 * one of them its matches are candidates again, a superset that the exact test must decide.
 */
const REPLACED_IN_INDEX = /[\uFFFD-\uFFFF]/;

/** `text` as SQLite's `lower()` makes it: ASCII letters only. */
const lowerAscii = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());

/**
 * The query of `products_trigram_lower` for "column contains `text`", or null under three
 * characters. That index holds the `lower()`ed values, case as is (migration 0027), so it matches
 * exactly what `containsText` does.
 */
export function trigramMatchQuery(column: "name" | "model", text: string): string | null {
  if ([...text].length < TRIGRAM_MIN) return null;
  return `${column} : "${lowerAscii(text).replaceAll('"', '""')}"`;
}

/**
 * The base products whose `column` contains one or two characters, found without reading every value
 * (migration 0027), as ids: an occurrence at a value's position i begins the trigram at i unless it
 * lies within the last two characters; the trigrams that begin with the text are a range of
 * `products_trigram_lower_terms`, the last characters are indexed (`products_base_<column>_end_idx`,
 * `_last_idx`). Three disjoint sets, exactly the values containing the text (the index holds
 * `lower()`ed values). Null for other text, for a last character without a successor, and for text
 * holding a character the index stores otherwise (`REPLACED_IN_INDEX`).
 */
function shortTextCandidates(column: "name" | "model", text: string, args: Args): SQL | null {
  if (REPLACED_IN_INDEX.test(text)) return null;
  const characters = [...lowerAscii(text)];
  if (characters.length < 1 || characters.length >= TRIGRAM_MIN) return null;
  const lower = characters.join("");
  // The terms that begin with `lower` (compared as UTF-8 bytes, that is by code point): from it up
  // to the text with its last character's successor.
  const point = characters.at(-1)!.codePointAt(0)!;
  if (point >= 0x10ffff) return null;
  // Past the surrogates, which no text holds, the next character is U+E000.
  const successor = point + 1 >= 0xd800 && point + 1 <= 0xdfff ? 0xe000 : point + 1;
  const upper = characters.slice(0, -1).join("") + String.fromCodePoint(successor);
  const [from, below] = [args.value(lower), args.value(upper)];
  const value = sql.raw(`p.${column}`);
  const trigrams = sql`SELECT id FROM (SELECT DISTINCT doc AS id FROM products_trigram_lower_terms WHERE term >= ${from} AND term < ${below} AND col = ${sql.raw(`'${column}'`)})`;
  const last = sql`lower(substr(${value}, -1))`;
  const lastTwo = sql`lower(substr(${value}, -2))`;
  if (characters.length === 2) {
    // Ends with the text, and has it nowhere a trigram begins.
    const ending = sql`SELECT p.id FROM ${via(`products_base_${column}_end_idx`)} WHERE ${BASE} AND ${lastTwo} = ${from}
      AND instr(lower(substr(${value}, 1, length(${value}) - 1)), ${from}) = 0`;
    return sql`${trigrams} UNION ALL ${ending}`;
  }
  // One character: the last one, or else the one before it (the last two begin with it), and nowhere a trigram begins.
  const notEarlier = sql`instr(lower(substr(${value}, 1, length(${value}) - 2)), ${from}) = 0`;
  const lastChar = sql`SELECT p.id FROM ${via(`products_base_${column}_last_idx`)} WHERE ${BASE} AND ${last} = ${from} AND ${notEarlier}`;
  const beforeLast = sql`SELECT p.id FROM ${via(`products_base_${column}_end_idx`)} WHERE ${BASE} AND ${lastTwo} >= ${from} AND ${lastTwo} < ${below}
      AND ${last} <> ${from} AND ${notEarlier}`;
  return sql`${trigrams} UNION ALL ${lastChar} UNION ALL ${beforeLast}`;
}

// Text filters compare `lower()`ed text (`instr`, `substr`), not LIKE: D1 refuses a LIKE pattern
// over 50 bytes ("LIKE or GLOB pattern too complex"), and a filter of 100 characters takes up to
// 400 bytes of UTF-8 once escaped. `lower()` folds ASCII letters as LIKE does, and `%`, `_` and
// `\` are plain characters without any escaping.

/** "`column` contains `text`", ASCII letters in any case. */
export function containsText(column: SQL, text: SQL | string): SQL {
  return sql`instr(lower(${column}), lower(${text})) > 0`;
}

/**
 * "`column` starts with `text`", ASCII letters in any case; an empty `text` matches every value.
 * Only the head of each value is lowered and compared.
 */
export function startsWithText(column: SQL, text: SQL | string): SQL {
  return sql`lower(substr(${column}, 1, length(${text}))) = lower(${text})`;
}

function rangeConditions(column: SQL, range: Range | undefined, args: Args): SQL[] {
  const out: SQL[] = [];
  if (range?.ge !== undefined) out.push(sql`${column} >= ${args.value(range.ge)}`);
  if (range?.le !== undefined) out.push(sql`${column} <= ${args.value(range.le)}`);
  return out;
}

const hasRange = (range: Range | undefined): range is Range => range !== undefined && (range.ge !== undefined || range.le !== undefined);

/** The owner the filter restricts to: a user id, "nobody" (an anonymous `owner=me`), or none. */
function ownerOf(filter: ProductFilter, viewerId: number | null): number | "nobody" | null {
  if (filter.ownerMe) return viewerId === null ? "nobody" : viewerId;
  return filter.ownerId ?? null;
}

/**
 * `quality_score[lt|ge]` as a range of `quality_score`, and `quality_fail[in]` as "any of these
 * checks is 0", with the range it implies (`quality_score < 1`) for the index to narrow on.
 */
function qualityConditions(filter: ProductFilter, args: Args): SQL[] {
  const out: SQL[] = [];
  const { lt, ge } = filter.qualityScore ?? {};
  if (ge !== undefined) out.push(sql`p.quality_score >= ${args.value(ge)}`);
  const fails = filter.qualityFailIn ?? [];
  const below = fails.length > 0 ? Math.min(lt ?? 1, 1) : lt;
  if (below !== undefined) out.push(sql`p.quality_score < ${args.value(below)}`);
  if (fails.length > 0) {
    // Column names from the fixed list of codes, never from the request's text.
    out.push(
      sql`(${sql.join(
        fails.map((code) => sql.raw(`p.${checkColumn(code)} = 0`)),
        sql` OR `,
      )})`,
    );
  }
  return out;
}

/**
 * A filter's conditions over base products (`p`), and the ways an index can reach its matches
 * (`drivers`), for the statements of one request.
 */
interface Compiled {
  args: Args;
  /** The filter's conditions, each on its own. */
  where: SQL[];
  /** All of `where`, joined. */
  conditions: SQL;
  /** False when nothing can match (no search word, an anonymous `owner=me`). */
  satisfiable: boolean;
  drivers: Driver[];
  /** How many of the filter's parameters (a range counts once) restrict the list. */
  conditionCount: number;
  /** The ids of the types a `product_type_name[in]` names, as a sub-select; null without one. */
  typeIds: SQL | null;
  /** The brands of a `brand[in]`, as a sub-select; null without one. */
  brands: SQL | null;
}

/**
 * A filter an index can drive: reading `source` with the driver's condition reaches exactly its
 * matches (plus what `extra` adds, a superset test of the filter that only this way of reading
 * needs). `count(cap)` is how many base products that is: exact from the counters, or counted up
 * to `cap` through the index itself. `walks` names the order the index also returns its rows in
 * (its rows need no sort then).
 */
/** Per order field, the index (and the extra condition that lets it seek) that reads the driver's rows already in that order. */
type Walks = Partial<Record<ProductOrderField, { source: SQL; extra?: SQL }>>;

interface Driver {
  name: string;
  source: SQL;
  extra: SQL | null;
  count: (cap: SQL) => SQL;
  exact: boolean;
  walks: Walks;
  /** The condition of the filter (its index in `Compiled.where`) that `source` and `extra` already ensure, left out of this driver's arm. */
  replaces?: number;
  /** Whether `count` is exactly the filter's total when the filter is this driver's condition alone (not a superset). */
  countIsTotal: boolean;
  /** Whether `source` reaches only the products this driver shares with another exact one (a type and a brand): the cheapest to count through. */
  pair?: boolean;
  /**
   * The ids the driver reaches, at most `cap` of them (`SELECT ... AS id`): a plan keeps them (a
   * common table expression), counts them, and reads its arm from them when they are few enough,
   * so an index that is not a plain index of `products` (full text, trigrams) or a scan (a short
   * `[ilike]`) is read once.
   */
  candidates?: (cap: SQL) => SQL;
}

const BASE = sql.raw("p.parent_id IS NULL");

function walksOf(indexes: Partial<Record<ProductOrderField, string>>): Walks {
  return Object.fromEntries(Object.entries(indexes).map(([field, index]) => [field, { source: via(index) }]));
}

function via(index: string | null): SQL {
  return sql.raw(index ? `products p INDEXED BY ${index}` : "products p");
}

/** Up to `cap` base products through `index` with `condition`, counted. */
function boundedCount(index: string, condition: SQL, cap: SQL): SQL {
  return sql`(SELECT count(*) FROM (SELECT 1 FROM ${via(index)} WHERE ${BASE} AND ${condition} LIMIT ${cap}))`;
}

function compile(filter: ProductFilter, viewerId: number | null): Compiled {
  const args = new Args();
  const where: SQL[] = [BASE];
  const drivers: Driver[] = [];
  let satisfiable = true;

  if (filter.search !== undefined) {
    const match = ftsMatchQuery(filter.search);
    if (match === null) {
      // Text with no word in it cannot match any indexed word.
      satisfiable = false;
    } else {
      const query = args.value(match);
      where.push(sql`p.id IN (SELECT rowid FROM products_fts WHERE products_fts MATCH ${query})`);
      drivers.push({
        name: "search",
        // The full-text index's matches, each looked up by id.
        source: sql.raw("products_fts CROSS JOIN products p ON p.id = products_fts.rowid"),
        extra: sql`products_fts MATCH ${query}`,
        count: (cap) => sql`(SELECT count(*) FROM (SELECT 1 FROM products_fts WHERE products_fts MATCH ${query} LIMIT ${cap}))`,
        exact: false,
        walks: {},
        replaces: where.length - 1,
        countIsTotal: true,
        candidates: (cap) => sql`SELECT rowid AS id FROM products_fts WHERE products_fts MATCH ${query} LIMIT ${cap}`,
      });
    }
  }

  const owner = ownerOf(filter, viewerId);
  if (owner === "nobody") {
    satisfiable = false;
  } else if (owner !== null) {
    const id = args.value(owner);
    where.push(sql`p.owner_id = ${id}`);
    drivers.push({
      name: "owner",
      source: via("products_base_owner_idx"),
      extra: null,
      count: () => sql`coalesce((SELECT base_products FROM owner_counts WHERE owner_id = ${id}), 0)`,
      exact: true,
      walks: walksOf({
        created_at: "products_base_owner_idx",
        updated_at: "products_base_owner_updated_idx",
        name: "products_base_owner_name_idx",
        brand: "products_base_owner_brand_idx",
        model: "products_base_owner_model_idx",
      }),
      countIsTotal: true,
    });
  }

  for (const column of ["name", "model"] as const) {
    const text = column === "name" ? filter.nameIlike : filter.modelIlike;
    if (text === undefined) continue;
    const contains = containsText(sql.raw(`p.${column}`), args.value(text));
    where.push(contains);
    const trigram = trigramMatchQuery(column, text);
    const short = trigram === null ? shortTextCandidates(column, text, args) : null;
    if (trigram !== null) {
      // The trigram index's matches, exactly those of the test (but for `REPLACED_IN_INDEX`): the
      // count then reads the index alone.
      const query = args.value(trigram);
      drivers.push({
        name: `${column}[ilike]`,
        source: sql.raw("products_trigram_lower CROSS JOIN products p ON p.id = products_trigram_lower.rowid"),
        extra: sql`products_trigram_lower MATCH ${query}`,
        count: (cap) =>
          sql`(SELECT count(*) FROM (SELECT 1 FROM products_trigram_lower WHERE products_trigram_lower MATCH ${query} LIMIT ${cap}))`,
        exact: false,
        walks: {},
        countIsTotal: !REPLACED_IN_INDEX.test(text),
        candidates: (cap) => sql`SELECT rowid AS id FROM products_trigram_lower WHERE products_trigram_lower MATCH ${query} LIMIT ${cap}`,
      });
    } else if (short !== null) {
      // One or two characters make no trigram: the terms that begin with them and the values that end
      // with them (`shortTextCandidates`), exactly the matches, so they count alone too.
      drivers.push({
        name: `${column}[ilike]`,
        source: sql`(${short}) g CROSS JOIN products p ON p.id = g.id`,
        extra: null,
        count: (cap) => sql`(SELECT count(*) FROM (${short} LIMIT ${cap}))`,
        exact: false,
        walks: {},
        countIsTotal: true,
        candidates: (cap) => sql`${short} LIMIT ${cap}`,
      });
    } else {
      // Short text ending in U+10FFFF (no successor) or holding a character the trigram index stores
      // otherwise: the column's own index holds every value, so the test reads index entries only
      // (no table row), and stops counting past the cap.
      const index = column === "name" ? "products_base_name_idx" : "products_base_model_idx";
      drivers.push({
        name: `${column}[ilike]`,
        source: via(index),
        extra: null,
        count: (cap) => boundedCount(index, contains, cap),
        exact: false,
        walks: {},
        countIsTotal: true,
        candidates: (cap) => sql`SELECT p.id AS id FROM ${via(index)} WHERE ${BASE} AND ${contains} LIMIT ${cap}`,
      });
    }
  }

  let brandList: SQL | null = null;
  if (filter.brandIn && filter.brandIn.length > 0) {
    // One brand is an equality, which the index also returns in `created_at` order.
    const one = filter.brandIn.length === 1;
    const brands = args.list(filter.brandIn);
    brandList = brands;
    where.push(one ? sql`p.brand = ${args.value(filter.brandIn[0]!)}` : sql`p.brand IN ${brands}`);
    const walks = walksOf({
      created_at: "products_base_brand_created_idx",
      updated_at: "products_base_brand_updated_idx",
      name: "products_base_brand_name_idx",
      model: "products_base_brand_model_idx",
    });
    // The brand order's index compares without case; brands are stored lower-cased, so the same values.
    walks.brand = { source: via("products_base_brand_idx"), extra: sql`p.brand COLLATE NOCASE IN ${brands}` };
    drivers.push({
      name: "brand[in]",
      source: via("products_base_brand_created_idx"),
      extra: null,
      count: () => sql`coalesce((SELECT sum(base_products) FROM brand_counts WHERE brand IN ${brands}), 0)`,
      exact: true,
      walks,
      countIsTotal: true,
    });
  }

  let typeIds: SQL | null = null;
  if (filter.productTypeNameIn && filter.productTypeNameIn.length > 0) {
    const types = sql`(SELECT id FROM product_types WHERE name COLLATE NOCASE IN ${args.list(filter.productTypeNameIn)})`;
    where.push(sql`p.product_type_id IN ${types}`);
    typeIds = types;
    drivers.push({
      name: "product_type_name[in]",
      // With a brand too, the (type, brand) index holds only their shared products, and the total
      // is counted through it (docs/product-list.md "Plans"); it compares brands without case, and
      // brands are stored lower-cased, so the same values.
      source: via(brandList ? "products_base_type_brand_idx" : "products_base_type_idx"),
      extra: brandList ? sql`p.brand COLLATE NOCASE IN ${brandList}` : null,
      pair: brandList !== null,
      count: () => sql`coalesce((SELECT sum(base_products) FROM product_type_counts WHERE product_type_id IN ${types}), 0)`,
      exact: true,
      walks: walksOf({
        created_at: "products_base_type_created_idx",
        updated_at: "products_base_type_updated_idx",
        name: "products_base_type_name_idx",
        brand: "products_base_type_brand_idx",
        model: "products_base_type_model_idx",
      }),
      countIsTotal: true,
    });
  }

  const ranges: [keyof ProductFilter & ("createdAt" | "updatedAt" | "weightG"), string, string, ProductOrderField | null][] = [
    ["createdAt", "p.created_at", "products_base_created_idx", "created_at"],
    ["updatedAt", "p.updated_at", "products_base_updated_idx", "updated_at"],
    ["weightG", "p.weight_g", "products_base_weight_idx", null],
  ];
  let rangeParts = 0;
  for (const [key, column, index, walks] of ranges) {
    const range = filter[key];
    if (!hasRange(range)) continue;
    const conditions = rangeConditions(sql.raw(column), range, args);
    where.push(...conditions);
    rangeParts += conditions.length - 1;
    const condition = sql.join(conditions, sql` AND `);
    drivers.push({
      name: key,
      source: via(index),
      extra: null,
      count: (cap) => boundedCount(index, condition, cap),
      exact: false,
      walks: walks ? { [walks]: { source: via(index) } } : {},
      countIsTotal: true,
    });
  }

  const quality = qualityConditions(filter, args);
  if (quality.length > 0) {
    // One condition of the filter, however many parameters make it: the quality index holds the
    // scores in range, and counts them (a failing check implies a score below 1).
    const condition = sql.join(quality, sql` AND `);
    where.push(condition);
    drivers.push({
      name: "quality",
      source: via("products_base_quality_idx"),
      extra: null,
      count: (cap) => boundedCount("products_base_quality_idx", condition, cap),
      exact: false,
      walks: {},
      countIsTotal: true,
    });
  }

  return {
    args,
    where,
    conditions: sql.join(where, sql` AND `),
    satisfiable,
    drivers,
    conditionCount: where.length - 1 - rangeParts,
    typeIds,
    brands: brandList,
  };
}

// ---------------------------------------------------------------------------------------------
// Plans

/**
 * One way of reading a page: `from` (the rows' source, joins included) in `order`. An arm runs
 * only when the statement's plan says so: its LIMIT is 0 otherwise, and SQLite then skips it.
 */
interface Arm {
  /** Builds the arm's SELECT for `limit` rows after `offset`, `limit` being SQL that is 0 when the arm does not run. */
  select: (columns: SQL, limit: SQL, offset: number) => SQL;
}

/** The join an arm needs when its order reads the type's name. */
const TYPE_JOIN = sql.raw("LEFT JOIN product_types pt ON pt.id = p.product_type_id");

const readsType = (order: readonly OrderTerm[]) => order.some((term) => term.field === "product_type_name");

/** The joins a list row needs: the owner (name, visibility) and the type's name. */
const ROW_JOINS = recordJoins("pt");

const ROW_COLUMNS = recordColumns("pt");

function plainArm(source: SQL, joins: SQL, where: SQL, order: readonly OrderTerm[]): Arm {
  return {
    select: (columns, limit, offset) =>
      sql`SELECT ${columns} FROM ${source} ${joins} WHERE ${where} ORDER BY ${orderBySql(order)} LIMIT ${limit} OFFSET ${int(offset)}`,
  };
}

/**
 * The walk of an order that starts with `product_type_name`: the types in name order (their
 * index), and for each the base products of that type in the second term's order (its type pair
 * index) or, with one term, in `id` order (`products_base_type_idx`), then the untyped ones
 * (nulls last). No sort, and it stops when the page is full. It orders two
 * types whose names are equal but for case one after the other (by type id) rather than mixing
 * their products by id, so the plan takes it only while no such two types exist (`typeNamesDistinct`).
 */
function typeWalk(where: SQL, order: readonly OrderTerm[], typeIds: SQL | null): Arm {
  const [first, ...rest] = order;
  const descending = first!.descending;
  // Each type's products in the second term's order when it has a pair index, else by id (the rest sorted per type).
  const pairs = sql.raw(`products p INDEXED BY ${(rest[0] && TYPE_PAIR_INDEX[rest[0].field]) ?? "products_base_type_idx"}`);
  const tail = [...rest.map((term) => termSql(term)), sql.raw(`p.id ${idDescending(order) ? "DESC" : "ASC"}`)];
  const typedOrder = sql.join(
    [sql`pt.name COLLATE NOCASE ${direction(descending)}`, sql`pt.id ${direction(descending)}`, ...tail],
    sql`, `,
  );
  return {
    select: (columns, limit, offset) => {
      const window = sql`(CASE WHEN ${limit} > 0 THEN ${int(offset)} + ${limit} ELSE 0 END)`;
      const typed = sql`SELECT * FROM (SELECT ${columns} FROM product_types pt INDEXED BY product_types_name_nocase_idx
            CROSS JOIN ${pairs} ON p.product_type_id = pt.id
            WHERE ${typeIds ? sql`+pt.id IN ${typeIds} AND ` : sql``}${where} ORDER BY ${typedOrder} LIMIT ${window})`;
      // A type filter leaves no untyped product to list.
      const untyped = typeIds
        ? sql``
        : sql` UNION ALL SELECT * FROM (SELECT ${columns} FROM ${pairs}
            WHERE p.product_type_id IS NULL AND ${where} ORDER BY ${sql.join(tail, sql`, `)} LIMIT ${window})`;
      return sql`SELECT * FROM (${typed}${untyped}) LIMIT ${limit} OFFSET ${int(offset)}`;
    },
  };
}

/**
 * Per second order term, the index that holds each brand's (or each type's) base products in that
 * term's order (the `id` tie-breaker is its last column): walking the brands (or types) in order
 * and, within each, this index, returns an order of two terms or more without sorting a group.
 */
const BRAND_PAIR_INDEX: Partial<Record<ProductOrderField, string>> = {
  name: "products_base_brand_name_idx",
  model: "products_base_brand_model_idx",
  created_at: "products_base_brand_created_idx",
  updated_at: "products_base_brand_updated_idx",
};
const TYPE_PAIR_INDEX: Partial<Record<ProductOrderField, string>> = {
  name: "products_base_type_name_idx",
  model: "products_base_type_model_idx",
  brand: "products_base_type_brand_idx",
  created_at: "products_base_type_created_idx",
  updated_at: "products_base_type_updated_idx",
};

/**
 * The walk of an order of two terms or more that starts with `brand` and whose second term has a
 * brand pair index: the distinct brands in order (`brand_counts`, whose key is the brand: brands are
 * stored lower-cased, so their binary order is the NOCASE order of the contract), and for each
 * the pair index in the remaining terms' order, then the products without a brand (nulls last). A
 * page reads its window (and a counter row per brand it passes), not a whole brand. Null when the
 * order has no such index (one term, or `product_type_name` second).
 */
function brandWalk(where: SQL, joins: SQL, order: readonly OrderTerm[], brands: SQL | null): Arm | null {
  const [first, second] = order;
  const index = second ? BRAND_PAIR_INDEX[second.field] : undefined;
  if (first?.field !== "brand" || !index) return null;
  const tail = [...order.slice(1).map((term) => termSql(term)), sql.raw(`p.id ${idDescending(order) ? "DESC" : "ASC"}`)];
  const pairs = sql.raw(`products p INDEXED BY ${index}`);
  return {
    select: (columns, limit, offset) => {
      const window = sql`(CASE WHEN ${limit} > 0 THEN ${int(offset)} + ${limit} ELSE 0 END)`;
      const branded = sql`SELECT * FROM (SELECT ${columns} FROM brand_counts b CROSS JOIN ${pairs} ON p.brand = b.brand ${joins}
            WHERE b.base_products > 0 AND ${brands ? sql`b.brand IN ${brands} AND ` : sql``}${where}
            ORDER BY b.brand ${direction(first.descending)}, ${sql.join(tail, sql`, `)} LIMIT ${window})`;
      // A brand filter leaves no product without a brand to list.
      const unbranded = brands
        ? sql``
        : sql` UNION ALL SELECT * FROM (SELECT ${columns} FROM ${pairs} ${joins} WHERE p.brand IS NULL AND ${where}
            ORDER BY ${sql.join(tail, sql`, `)} LIMIT ${window})`;
      return sql`SELECT * FROM (${branded}${unbranded}) LIMIT ${limit} OFFSET ${int(offset)}`;
    },
  };
}

/** Whether no two product types have names equal but for case (the condition of `typeWalk`). */
const typeNamesDistinct = sql.raw(
  "NOT EXISTS (SELECT 1 FROM product_types INDEXED BY product_types_name_nocase_idx GROUP BY name COLLATE NOCASE HAVING count(*) > 1)",
);

/**
 * The rows-read threshold of a plan: a driver is read (and its matches sorted) when it reaches at
 * most about sqrt(window x base products) of them; above that, walking the order's index with the
 * filter as a test reads fewer (window x base products / matches). Computed in SQL from the
 * counter of base products as the power of two nearest the square root (SQLite's math functions
 * are an optional part of its build).
 */
function thresholdSql(window: number): SQL {
  const product = sql`(${int(window)} * coalesce((SELECT count FROM catalogue_totals WHERE name = 'base_products'), 0))`;
  return sql`(SELECT CASE ${THRESHOLD_STEPS} ELSE ${int(2 ** 30)} END FROM (SELECT ${product} AS x))`;
}

/**
 * The steps of `thresholdSql`, one text built once (61 pieces of SQL per statement otherwise):
 * steps of a factor 2 in the product (sqrt(2) in the threshold); 0.87 = sqrt(3/4): a driven row
 * costs about two rows read (its index entry, its row for the sort), a walked one about one and a half.
 */
const THRESHOLD_STEPS = sql.raw(
  Array.from({ length: 61 }, (_, i) => `WHEN x <= ${2 ** i} THEN ${Math.max(1, Math.floor(0.87 * Math.SQRT2 ** i))}`).join(" "),
);

/**
 * The driver whose index reads its rows already in the order's first field: an owner, brand or
 * type (one index per order, the value or values sought; for a list of values SQLite reads each
 * value's rows in order and stops each after the window), or a range of the order's own column.
 */
function walkerOf(compiled: Compiled, order: readonly OrderTerm[]): Driver | undefined {
  return byPriority(compiled.drivers).find((driver) => driver.walks[order[0]!.field] !== undefined);
}

function byPriority(drivers: readonly Driver[]): Driver[] {
  return [...drivers].sort((a, b) => DRIVER_PRIORITY.indexOf(a.name) - DRIVER_PRIORITY.indexOf(b.name));
}

/** Terms D1 allows in one compound SELECT (SQLITE_LIMIT_COMPOUND_SELECT). */
const MAX_COMPOUND_TERMS = 5;

/**
 * Which drivers get an arm of their own when there are more than the compound SELECT allows (the
 * others stay tests of every arm): counted ones first (their count costs a row or a few), then
 * the full-text and trigram indexes (a word or a substring is usually narrower than a range).
 */
const DRIVER_PRIORITY = [
  "owner",
  "brand[in]",
  "product_type_name[in]",
  "search",
  "name[ilike]",
  "model[ilike]",
  "createdAt",
  "updatedAt",
  "weightG",
  "quality",
];

/** `c1`, `c2`, ...: the names of the drivers' counts in a plan's `FROM`. */
const countName = (i: number) => sql.raw(`c${i + 1}`);

/**
 * The `threshold` and `plan` rows of a statement that reads through one of `drivers` or a walk:
 * `plan.arm` is the number (from 1) of the driver reaching the fewest base products when that is
 * at most the threshold of `window` rows, else `otherwise` (SQL over the counts `c1`, ...). Each
 * driver's count stops at the threshold + 1 unless it comes from a counter.
 */
function planCtes(drivers: readonly Driver[], window: number, otherwise: SQL): { ctes: SQL[]; sources: (SQL | null)[] } {
  const names = sql.join(
    drivers.map((_, i) => countName(i)),
    sql`, `,
  );
  const least = drivers.length > 1 ? sql`min(${names})` : countName(0);
  const choices = drivers.map((_, i) => sql`WHEN ${countName(i)} = ${least} THEN ${int(i + 1)}`);
  const cap = sql`(SELECT k FROM threshold) + 1`;
  const kept: SQL[] = [];
  const sources = drivers.map((driver, i) => {
    if (!driver.candidates) return null;
    const name = sql.raw(`d${i + 1}`);
    kept.push(sql`${name}(id) AS MATERIALIZED (${driver.candidates(cap)})`);
    return sql`${name} CROSS JOIN products p ON p.id = ${name}.id`;
  });
  const counts = drivers.map(
    (driver, i) => sql`${driver.candidates ? sql.raw(`(SELECT count(*) FROM d${i + 1})`) : driver.count(cap)} AS ${countName(i)}`,
  );
  return {
    ctes: [
      sql`threshold(k) AS MATERIALIZED (SELECT ${thresholdSql(window)})`,
      ...kept,
      sql`plan(arm) AS MATERIALIZED (SELECT CASE WHEN ${least} > (SELECT k FROM threshold) THEN ${otherwise} ${sql.join(choices, sql` `)} END
      FROM (SELECT ${sql.join(counts, sql`, `)}))`,
    ],
    sources,
  };
}

/** `limit` when the plan chose arm `id`, else 0 (SQLite then skips the arm). */
const armLimit = (id: number, limit: number) =>
  sql`(CASE WHEN (SELECT arm FROM plan) = ${sql.raw(String(id))} THEN ${int(limit)} ELSE 0 END)`;

/**
 * The conditions of a driver's arm: the filter's, but the one its source ensures, and its own
 * `extra` (not when the arm reads the driver's kept candidates, which already meet it).
 */
function whereOf(compiled: Compiled, driver: Driver, fromCandidates = false): SQL {
  const kept = compiled.where.filter((_, i) => i !== driver.replaces);
  return sql.join(driver.extra && !fromCandidates ? [...kept, driver.extra] : kept, sql` AND `);
}

/**
 * The rows of a window of the list (`limit` rows after `offset` in `order`), as one statement
 * body and the common table expressions it needs after `args`. The walk reads the order's index
 * (or the index of a driver that returns the order); every other driver is an arm of its own, and
 * the `plan` row runs the cheapest (`planCtes`). An order by type name walks the types
 * (`typeWalk`) while their names are distinct ignoring case, else sorts (arm -1).
 */
function windowRows(
  compiled: Compiled,
  order: readonly OrderTerm[],
  window: { limit: number; offset: number },
  columns: SQL,
  joins: SQL,
): { ctes: SQL[]; body: SQL } {
  const { limit, offset } = window;
  const first = order[0]!.field;
  const walker = walkerOf(compiled, order);
  const walkIndex = walker?.walks[first];
  const walkWhere = walkIndex?.extra ? sql`${compiled.conditions} AND ${walkIndex.extra}` : compiled.conditions;
  // A brand first and a second term: each brand's products in that term's order (an owner or a type filter keeps its own index).
  const pairWalk = !walker || walker.name === "brand[in]" ? brandWalk(compiled.conditions, joins, order, compiled.brands) : null;
  if (walker?.exact && pairWalk) return { ctes: [], body: pairWalk.select(columns, int(limit), offset) };
  // An owner, brand or type that reads the order reads at most (values x window) rows: no plan beats it by much.
  if (walker?.exact) return { ctes: [], body: plainArm(walkIndex!.source, joins, walkWhere, order).select(columns, int(limit), offset) };
  const typeOrder = !walker && first === "product_type_name";
  // D1 allows five terms in a compound SELECT: the walk, the type order's sort, and the drivers first in `DRIVER_PRIORITY`.
  // (Under a type order the type walk reads a type filter's types only: that driver needs no arm.)
  const drivers = byPriority(
    compiled.drivers.filter((driver) => driver !== walker && !(typeOrder && driver.name === "product_type_name[in]")),
  ).slice(0, MAX_COMPOUND_TERMS - (typeOrder ? 2 : 1));
  const walk = pairWalk
    ? pairWalk
    : walkIndex
      ? plainArm(walkIndex.source, joins, walkWhere, order)
      : typeOrder
        ? typeWalk(compiled.conditions, order, compiled.typeIds)
        : plainArm(via(ORDER_INDEX[first]), joins, compiled.conditions, order);
  if (drivers.length === 0 && !typeOrder) return { ctes: [], body: walk.select(columns, int(limit), offset) };

  const walkOrSort = typeOrder ? sql`CASE WHEN ${typeNamesDistinct} THEN 0 ELSE -1 END` : sql.raw("0");
  const { ctes, sources } =
    drivers.length > 0
      ? planCtes(drivers, limit + offset, walkOrSort)
      : { ctes: [sql`plan(arm) AS MATERIALIZED (SELECT ${walkOrSort})`], sources: [] };
  const arms: { id: number; arm: Arm }[] = drivers.map((driver, i) => {
    const kept = sources[i];
    return {
      id: i + 1,
      arm: plainArm(kept ?? driver.source, joins, whereOf(compiled, driver, kept !== null && kept !== undefined), order),
    };
  });
  arms.push({ id: 0, arm: walk });
  if (typeOrder) arms.push({ id: -1, arm: plainArm(via(null), joins, compiled.conditions, order) });
  const parts = arms.map(({ id, arm }) => sql`SELECT * FROM (${arm.select(columns, armLimit(id, limit), offset)})`);
  return { ctes, body: sql.join(parts, sql` UNION ALL `) };
}

/** Whether the filter's total can be read off the counters alone, and how. */
function counterTotal(filter: ProductFilter, compiled: Compiled): SQL | null {
  const narrowing = [
    filter.search !== undefined,
    filter.nameIlike !== undefined,
    filter.modelIlike !== undefined,
    hasRange(filter.createdAt),
    hasRange(filter.updatedAt),
    hasRange(filter.weightG),
  ];
  if (narrowing.some(Boolean)) return null;
  if (compiled.drivers.length === 0) return sql.raw("coalesce((SELECT count FROM catalogue_totals WHERE name = 'base_products'), 0)");
  return compiled.drivers.length === 1 && compiled.drivers[0]!.exact ? compiled.drivers[0]!.count(sql.raw("0")) : null;
}

/**
 * The total of the filter, up to `TOTAL_LIMIT + 1`: from the counters when the filter is none,
 * or only a brand list, a type list or an owner; otherwise counted through a driver, stopping at
 * `TOTAL_LIMIT + 1` matches: the one the page's plan reads when it reads one, else a type and a
 * brand through their pair index, else the driver whose index returns the order, else the one with the smallest exact count, else the first
 * (with no driver, through the `created_at` index).
 */
function totalStatement(filter: ProductFilter, compiled: Compiled, order: readonly OrderTerm[], window: number): SQL {
  const { args, drivers } = compiled;
  const cap = TOTAL_LIMIT + 1;
  const fromCounters = counterTotal(filter, compiled);
  if (fromCounters) return args.withArgs(sql`SELECT min(${fromCounters}, ${int(cap)}) AS total`);
  const counted = (source: SQL, where: SQL, limit: SQL) =>
    sql`(SELECT count(*) FROM (SELECT 1 FROM ${source} WHERE ${where} LIMIT ${limit}))`;
  if (drivers.length === 0)
    return args.withArgs(sql`SELECT ${counted(via("products_base_created_idx"), compiled.conditions, int(cap))} AS total`);
  if (drivers.length === 1) {
    const [driver] = drivers;
    // The filter is this driver alone: its own count (the full-text or an index range, nothing else read) is the total.
    if (compiled.conditionCount === 1 && driver!.countIsTotal) return args.withArgs(sql`SELECT ${driver!.count(int(cap))} AS total`);
    return args.withArgs(sql`SELECT ${counted(driver!.source, whereOf(compiled, driver!), int(cap))} AS total`);
  }
  // Past the threshold the count goes through a driver's whole index: arm -(i + 1).
  const walker = walkerOf(compiled, order);
  const exact = drivers.map((driver, i) => ({ driver, i })).filter(({ driver }) => driver.exact);
  const whole = (i: number) => sql.raw(String(-(i + 1)));
  let otherwise: SQL;
  const pair = drivers.findIndex((driver) => driver.pair);
  if (pair >= 0) otherwise = whole(pair);
  else if (walker) otherwise = whole(drivers.indexOf(walker));
  else if (exact.length > 1) {
    const least = sql`min(${sql.join(
      exact.map(({ i }) => countName(i)),
      sql`, `,
    )})`;
    otherwise = sql`CASE ${sql.join(
      exact.map(({ i }) => sql`WHEN ${countName(i)} = ${least} THEN ${whole(i)}`),
      sql` `,
    )} END`;
  } else otherwise = whole(exact[0]?.i ?? 0);
  const { ctes, sources } = planCtes(drivers, window, otherwise);
  const parts = drivers.flatMap((driver, i) => {
    // Within the threshold a driver with kept candidates holds all of them: count those.
    const kept = sources[i];
    return [
      counted(kept ?? driver.source, whereOf(compiled, driver, Boolean(kept)), armLimit(i + 1, cap)),
      counted(driver.source, whereOf(compiled, driver), armLimit(-(i + 1), cap)),
    ];
  });
  return args.withArgs(sql`SELECT ${sql.join(parts, sql` + `)} AS total`, ctes);
}

/**
 * The page of base products matching `filter`, and their total (at most `TOTAL_LIMIT + 1`, see
 * `CountRow`): run both with `batchRows` for one round trip (`batchRows<[ProductListRow,
 * CountRow]>`). `viewerId` is the signed-in user or null; it only matters for `ownerMe`.
 */
export function productListStatements(filter: ProductFilter, viewerId: number | null, page: PageQuery): [rows: SQL, total: SQL] {
  const compiled = compile(filter, viewerId);
  if (!compiled.satisfiable) {
    return [sql`SELECT ${ROW_COLUMNS} FROM products p ${ROW_JOINS} WHERE 0`, sql`SELECT 0 AS total`];
  }
  const order = effectiveOrder(filter);
  const window = pageWindow(page);
  // The plan picks the page's ids (reading only what the filter and the order need); the rows
  // are then read and joined for those ids alone, and put in order again (at most a page).
  const { ctes, body } = windowRows(compiled, order, window, sql.raw("p.id AS id"), readsType(order) ? TYPE_JOIN : sql``);
  const rows = sql`SELECT ${ROW_COLUMNS} FROM (${body}) k CROSS JOIN products p ON p.id = k.id ${ROW_JOINS} ORDER BY ${orderBySql(order)}`;
  return [compiled.args.withArgs(rows, ctes), totalStatement(filter, compiled, order, window.limit + window.offset)];
}

// ---------------------------------------------------------------------------------------------
// Export

/**
 * Rows strictly after `cursor` in the order `order` (nulls last, then the `id` tie-breaker):
 * "equal on the first i-1 keys and after on key i", for each i. A null cursor key has nothing
 * after it but other nulls, which the next keys decide.
 */
function afterCursor(order: readonly OrderTerm[], cursor: ProductExportCursor, args: Args): SQL {
  // A plain bound on the first key as well, when it has one: SQLite cannot seek an index from the
  // OR below, and without the bound each chunk would walk the index from its start again.
  const first = order[0] ? ORDER_COLUMNS[order[0].field] : undefined;
  const firstValue = order[0] ? cursor[order[0].field] : null;
  const bound =
    first && !first.nullable && firstValue !== null
      ? sql`${first.expr} ${sql.raw(order[0]!.descending ? "<=" : ">=")} ${args.value(firstValue)} AND `
      : sql``;
  const disjuncts: SQL[] = [];
  const equalSoFar: SQL[] = [];
  for (const { field, descending } of order) {
    const { expr, nullable } = ORDER_COLUMNS[field];
    const value = cursor[field];
    if (value !== null) {
      const beyond = sql`${expr} ${sql.raw(descending ? "<" : ">")} ${args.value(value)}`;
      disjuncts.push(sql.join([...equalSoFar, nullable ? sql`(${beyond} OR ${expr} IS NULL)` : beyond], sql` AND `));
      equalSoFar.push(sql`${expr} = ${args.value(value)}`);
    } else {
      equalSoFar.push(sql`${expr} IS NULL`);
    }
  }
  disjuncts.push(sql.join([...equalSoFar, sql`p.id ${sql.raw(idDescending(order) ? "<" : ">")} ${args.value(cursor.id)}`], sql` AND `));
  return sql`(${bound}(${sql.join(
    disjuncts.map((d) => sql`(${d})`),
    sql` OR `,
  )}))`;
}

/**
 * The index an export chunk reads through: a driver whose index returns the order (owner or one
 * brand under `created_at`), else the order's own index, else (a full-text search, a type order)
 * the planner's choice. Each chunk resumes after a cursor, so an index in the order's direction
 * makes a chunk a range of it.
 */
function exportSource(compiled: Compiled, order: readonly OrderTerm[]): SQL {
  const first = order[0]!.field;
  const walk = walkerOf(compiled, order)?.walks[first];
  // (An index whose `extra` condition lets it seek is only worth its seek: without it the planner chooses.)
  if (walk && !walk.extra) return walk.source;
  if (compiled.drivers.some((d) => d.name === "search" || d.name === "owner")) return via(null);
  return via(ORDER_INDEX[first]);
}

/** Columns of a `productExportRoots` row: the id and every sort key, named like the fields. */
const ROOT_COLUMNS = sql.raw(
  ["p.id", ...PRODUCT_ORDER_FIELDS.map((field) => (field === "product_type_name" ? "pt.name AS product_type_name" : `p.${field}`))].join(
    ", ",
  ),
);

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
  const compiled = compile(filter, viewerId);
  if (!compiled.satisfiable)
    return sql`SELECT ${ROOT_COLUMNS} FROM products p LEFT JOIN product_types pt ON pt.id = p.product_type_id WHERE 0`;
  const where = after ? sql`${compiled.conditions} AND ${afterCursor(order, after, compiled.args)}` : compiled.conditions;
  return compiled.args.withArgs(
    sql`SELECT ${ROOT_COLUMNS} FROM ${exportSource(compiled, order)} LEFT JOIN product_types pt ON pt.id = p.product_type_id
      WHERE ${where} ORDER BY ${orderBySql(order)} LIMIT ${int(limit)}`,
  );
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

// ---------------------------------------------------------------------------------------------
// Facets

/** One row of `facetStatement`: a value of a field and its count. */
export interface FacetRow extends FacetValue {
  field: ProductFacetField;
}

const FACET_LIMIT = PRODUCT_QUERY_LIMITS.facetValues;

/** Facets over the whole catalogue, from the counters (exact; one index walk of at most 50 rows per field). */
function facetsFromCounters(field: ProductFacetField): SQL {
  switch (field) {
    case "brand":
      return sql.raw(`SELECT 'brand' AS field, brand AS value, base_products AS count FROM brand_counts INDEXED BY brand_counts_base_idx
        WHERE base_products > 0 ORDER BY base_products DESC, brand ASC LIMIT ${FACET_LIMIT}`);
    case "model":
      return sql.raw(`SELECT 'model' AS field, model AS value, base_products AS count FROM model_counts INDEXED BY model_counts_base_idx
        WHERE base_products > 0 ORDER BY base_products DESC, model ASC LIMIT ${FACET_LIMIT}`);
    case "product_type_name":
      return sql.raw(`SELECT 'product_type_name' AS field, t.name AS value, c.base_products AS count
        FROM product_type_counts c JOIN product_types t ON t.id = c.product_type_id
        WHERE c.base_products > 0 ORDER BY c.base_products DESC, t.name ASC LIMIT ${FACET_LIMIT}`);
  }
}

const SAMPLE_COLUMNS: Record<ProductFacetField, string> = { brand: "brand", model: "model", product_type_name: "type" };

/**
 * ONE statement for every field of `fields`: rows `{field, value, count}`, per field most frequent
 * first (ties by value), nulls left out, at most `PRODUCT_QUERY_LIMITS.facetValues`; shape the
 * answer with `facetsFromRows`. Without a filter the counts come from the counters. Under a
 * filter they are counted over the matching base products, at most the `facetSample` newest of
 * them (under a search alone the most recently added, by id, read in the full-text index's order;
 * otherwise read as a page of the list in `-created_at` order, with the same plans): exact when
 * no more match, lower bounds otherwise.
 */
export function facetStatement(filter: ProductFilter, fields: readonly ProductFacetField[], viewerId: number | null = null): SQL {
  const part = (select: SQL) => sql`SELECT * FROM (${select})`;
  const filtered = Object.entries(filter).some(([key, value]) => key !== "orderBy" && value !== undefined && value !== false);
  if (!filtered)
    return sql.join(
      fields.map((field) => part(facetsFromCounters(field))),
      sql` UNION ALL `,
    );
  const compiled = compile(filter, viewerId);
  if (!compiled.satisfiable) return sql`SELECT 'brand' AS field, NULL AS value, 0 AS count WHERE 0`;
  const columns = sql.raw("p.brand AS brand, p.model AS model, p.product_type_id AS type_id");
  const [only] = compiled.drivers;
  // A search alone: the full-text index's matches with the highest ids (ids are given in the order
  // records are added), read in that order straight off the index, so a frequent word costs the
  // sample, not all its matches. Any other filter: the newest by `created_at`, through the list's plans.
  const { ctes, body } =
    compiled.drivers.length === 1 && only!.name === "search"
      ? {
          ctes: [],
          body: sql`SELECT ${columns} FROM ${only!.source} WHERE ${whereOf(compiled, only!)}
            ORDER BY products_fts.rowid DESC LIMIT ${int(PRODUCT_QUERY_LIMITS.facetSample)}`,
        }
      : windowRows(compiled, DEFAULT_PRODUCT_ORDER, { limit: PRODUCT_QUERY_LIMITS.facetSample, offset: 0 }, columns, sql``);
  const grouped = fields.map((field) => {
    const value = field === "product_type_name" ? "t.name" : `s.${SAMPLE_COLUMNS[field]}`;
    const from = field === "product_type_name" ? "sample s JOIN product_types t ON t.id = s.type_id" : "sample s";
    return part(
      sql.raw(`SELECT '${field}' AS field, ${value} AS value, count(*) AS count FROM ${from} WHERE ${value} IS NOT NULL
        GROUP BY ${value} ORDER BY count DESC, value ASC LIMIT ${FACET_LIMIT}`),
    );
  });
  return compiled.args.withArgs(sql.join(grouped, sql` UNION ALL `), [...ctes, sql`sample AS MATERIALIZED (${body})`]);
}

/** `{brand: [{value, count}], ...}` from the rows of `facetStatement(filter, fields)`. */
export function facetsFromRows(
  fields: readonly ProductFacetField[],
  rows: readonly FacetRow[],
): Partial<Record<ProductFacetField, FacetValue[]>> {
  return Object.fromEntries(
    fields.map((field) => [field, rows.filter((row) => row.field === field).map(({ value, count }) => ({ value, count }))]),
  );
}

// ---------------------------------------------------------------------------------------------
// Suggestions

/**
 * Autocomplete for brand or model: the distinct values that start with `search` (ASCII letters
 * case-insensitive; brands are stored lower-case, so the prefix is lower-cased for them), over
 * every record, base products and components alike, since a value typed for one is a good
 * suggestion for the other. Most used first, then by value; one page and the total (up to
 * `TOTAL_LIMIT + 1`), for `batchRows<[FacetValue, CountRow]>`. An empty `search` suggests every value.
 *
 * Read from the counters (`brand_counts`, `model_counts`): an empty prefix walks their
 * `records DESC` index; a prefix walks the index of its first one or two characters in that
 * order, testing longer prefixes as it goes. The totals of an empty prefix come from
 * `catalogue_totals`; others count the values with the prefix, up to `TOTAL_LIMIT + 1`.
 */
export function suggestionStatements(kind: "brands" | "models", search: string, page: PageQuery): [rows: SQL, total: SQL] {
  const column = kind === "brands" ? "brand" : "model";
  const table = `${column}_counts`;
  const prefix = kind === "brands" ? search.toLowerCase() : search;
  const args = new Args();
  const { limit, offset } = pageWindow(page);
  const window = sql`LIMIT ${int(limit)} OFFSET ${int(offset)}`;
  if (prefix === "") {
    return [
      sql.raw(`SELECT ${column} AS value, records AS count FROM ${table} INDEXED BY ${table}_records_idx
        ORDER BY records DESC, ${column} ASC LIMIT ${limit} OFFSET ${offset}`),
      sql.raw(`SELECT min(coalesce((SELECT count FROM catalogue_totals WHERE name = '${kind}'), 0), ${TOTAL_LIMIT + 1}) AS total`),
    ];
  }
  const length = Math.min([...prefix].length, 2);
  const text = args.value(prefix);
  const where = sql`lower(substr(${sql.raw(column)}, 1, ${int(length)})) = lower(substr(${text}, 1, ${int(length)})) AND ${startsWithText(
    sql.raw(column),
    text,
  )}`;
  const from = sql.raw(`${table} INDEXED BY ${table}_prefix${length}_idx`);
  const total =
    [...prefix].length <= 2
      ? sql`SELECT min(coalesce((SELECT value_count FROM prefix_counts WHERE kind = ${sql.raw(`'${kind}'`)} AND prefix = lower(${text})), 0), ${int(
          TOTAL_LIMIT + 1,
        )}) AS total`
      : sql`SELECT count(*) AS total FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT ${int(TOTAL_LIMIT + 1)})`;
  return [
    args.withArgs(sql`SELECT ${sql.raw(column)} AS value, records AS count FROM ${from} WHERE ${where}
      ORDER BY records DESC, ${sql.raw(column)} ASC ${window}`),
    args.withArgs(total),
  ];
}
