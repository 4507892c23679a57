import { z } from "@hono/zod-openapi";
import { type PageQuery, PageQuerySchema } from "../../lib/pagination";
import { QUALITY_CHECK_CODES, type QualityCheckCode } from "../../lib/record-quality";
import { singleLineText } from "../../lib/text";
import {
  type OrderTerm,
  PRODUCT_FACET_FIELDS,
  PRODUCT_ORDER_FIELDS,
  PRODUCT_QUERY_LIMITS,
  type ProductFacetField,
  type ProductFilter,
  type ProductOrderField,
} from "../../services/products/query";

export type { ProductFilter } from "../../services/products/query";

// Query schemas of the product list, export, facets and suggestions (docs/product-list.md). The
// schemas validate and convert; a failure is a 422 pointing at `#/query/<name>`, and the objects
// are strict, so an unknown parameter is one too.

const LIMITS = PRODUCT_QUERY_LIMITS;

/** A comma list of 1..50 distinct, non-empty values (empty items from stray commas are dropped). */
function commaList(lowerCase: boolean) {
  return singleLineText().transform((text, ctx) => {
    const items = [
      ...new Set(
        text
          .split(",")
          .map((item) => (lowerCase ? item.trim().toLowerCase() : item.trim()))
          .filter(Boolean),
      ),
    ];
    if (items.length === 0) ctx.addIssue({ code: "custom", message: "Give at least one value." });
    if (items.length > LIMITS.inValues) ctx.addIssue({ code: "custom", message: `Give at most ${LIMITS.inValues} values.` });
    if (items.some((item) => item.length > LIMITS.valueLength)) {
      ctx.addIssue({ code: "custom", message: `Each value has at most ${LIMITS.valueLength} characters.` });
    }
    return items;
  });
}

const ilike = (what: string, example: string) =>
  singleLineText()
    .min(1)
    .max(LIMITS.valueLength)
    .optional()
    .openapi({ description: `Case-insensitive substring of the ${what} (\`%\` and \`_\` are plain characters).`, example });

/** ISO-8601 date-time with `Z` or an offset, as unix seconds; bounds are inclusive. */
const dateTimeBound = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((text) => Date.parse(text) / 1000)
    .optional()
    .openapi({ description, example: "2026-05-01T12:00:00Z" });

// Digits with an optional fraction: `z.coerce.number()` would read "" as 0 and accept "1e3".
const weightBound = (description: string, example: string) =>
  z
    .string()
    .regex(/^(?:\d+(?:\.\d+)?|\.\d+)$/, "Expected a non-negative decimal number.")
    .max(20)
    .transform(Number)
    .optional()
    .openapi({ description, example });

/** A score bound: a decimal from 0 to 1 (digits, an optional fraction; no exponent, no sign). */
const scoreBound = (description: string, example: string) =>
  z
    .string()
    .regex(/^(?:\d+(?:\.\d+)?|\.\d+)$/, "Expected a decimal number from 0 to 1.")
    .max(20)
    .transform(Number)
    .refine((value) => value <= 1, "Expected a decimal number from 0 to 1.")
    .optional()
    .openapi({ description, example });

/** `quality_fail[in]`: a comma list of check codes, each once. */
const checkCodeList = singleLineText()
  .transform((text, ctx) => {
    const codes = [
      ...new Set(
        text
          .split(",")
          .map((item) => item.trim())
          .filter(Boolean),
      ),
    ];
    if (codes.length === 0) ctx.addIssue({ code: "custom", message: "Give at least one check code." });
    const unknown = codes.filter((code) => !(QUALITY_CHECK_CODES as readonly string[]).includes(code));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `Unknown check code(s) ${unknown.map((code) => `"${code}"`).join(", ")}; use ${QUALITY_CHECK_CODES.join(", ")}.`,
      });
    }
    return codes as QualityCheckCode[];
  })
  .optional()
  .openapi({
    description: `Comma list of quality check codes (${QUALITY_CHECK_CODES.join(", ")}): records failing any of them (docs/quality.md).`,
    example: "has_weight,components_mass_balance",
  });

/**
 * `order_by`: `+field` or `-field` (no sign: ascending), comma-separated, each field once. A `+`
 * sent unencoded arrives as a space, hence the trim.
 */
export const OrderByParam = z
  .string()
  .transform((text, ctx): OrderTerm[] => {
    const terms: OrderTerm[] = [];
    for (const raw of text.split(",")) {
      const term = raw.trim();
      const descending = term.startsWith("-");
      const name = term.replace(/^[+-]/, "");
      if (!(PRODUCT_ORDER_FIELDS as readonly string[]).includes(name)) {
        ctx.addIssue({ code: "custom", message: `Unknown order field "${term}"; use ${PRODUCT_ORDER_FIELDS.join(", ")}.` });
        return z.NEVER;
      }
      const field = name as ProductOrderField;
      if (terms.some((t) => t.field === field)) {
        ctx.addIssue({ code: "custom", message: `"${field}" is given twice.` });
        return z.NEVER;
      }
      terms.push({ field, descending });
    }
    return terms;
  })
  .optional()
  .openapi({
    description: `Comma list of \`+field\` (ascending; a bare field too) or \`-field\` (descending) over ${PRODUCT_ORDER_FIELDS.join(", ")}. \`id\` always breaks ties. Default \`-created_at\`.`,
    example: "brand,-created_at",
  });

/**
 * The filter parameters shared by the list, the export and the facets. Compose them into a
 * route's query with `z.strictObject({...PRODUCT_FILTER_PARAMS, ...})`.
 */
export const PRODUCT_FILTER_PARAMS = {
  search: singleLineText().max(LIMITS.searchLength).optional().openapi({
    description:
      "Full text over name, description, brand and model: every word must appear (any column), the last as a prefix. Quotes, `*`, `OR`, `NEAR`, `-` and `:` are plain text. Empty means no search.",
    example: "fairphone batt",
  }),
  owner: z
    .literal("me")
    .optional()
    .openapi({ description: "`me`: only your own products (signed in only, otherwise 401).", example: "me" }),
  "name[ilike]": ilike("name", "phone"),
  "brand[in]": commaList(true)
    .optional()
    .openapi({ description: `Comma list of brands (any case), at most ${LIMITS.inValues}.`, example: "fairphone,nokia" }),
  "model[ilike]": ilike("model", "3310"),
  "created_at[ge]": dateTimeBound("Created at or after this ISO-8601 date-time."),
  "created_at[le]": dateTimeBound("Created at or before this ISO-8601 date-time."),
  "updated_at[ge]": dateTimeBound("Updated at or after this ISO-8601 date-time."),
  "updated_at[le]": dateTimeBound("Updated at or before this ISO-8601 date-time."),
  "weight_g[ge]": weightBound("Weight in grams at least this.", "100"),
  "weight_g[le]": weightBound("Weight in grams at most this.", "250.5"),
  "product_type_name[in]": commaList(false)
    .optional()
    .openapi({
      description: `Comma list of product type names (any case), at most ${LIMITS.inValues}.`,
      example: "Smartphone,Laptop",
    }),
  "quality_score[lt]": scoreBound(
    "`quality_score` below this (0 to 1): `1` finds every record with a failing check (docs/quality.md).",
    "1",
  ),
  "quality_score[ge]": scoreBound("`quality_score` at least this (0 to 1).", "0.5"),
  "quality_fail[in]": checkCodeList,
};

/** Query of `GET /v1/products`: the filters, `order_by`, `page` and `size`. */
export const ProductListQuerySchema = z.strictObject({
  ...PRODUCT_FILTER_PARAMS,
  order_by: OrderByParam,
  ...PageQuerySchema.shape,
});

export type ProductListQuery = z.infer<typeof ProductListQuerySchema>;

/**
 * Query of `GET /v1/users/{user_id}/products`: the list's, less `owner` (the path names the
 * owner, so `owner=me` is an unknown parameter there: 422).
 */
export const UserProductListQuerySchema = ProductListQuerySchema.omit({ owner: true });

/** The validated filter parameters (the output of `PRODUCT_FILTER_PARAMS`) and, optionally, `order_by`. */
export type ProductFilterQuery = z.infer<z.ZodObject<typeof PRODUCT_FILTER_PARAMS>> & { order_by?: OrderTerm[] };

function range(ge: number | undefined, le: number | undefined) {
  return ge === undefined && le === undefined ? undefined : { ...(ge !== undefined && { ge }), ...(le !== undefined && { le }) };
}

/** The validated query's filter and order as the plain `ProductFilter` the service takes. */
export function productFilterFromQuery(query: ProductFilterQuery): ProductFilter {
  const filter: ProductFilter = {};
  const search = query.search?.trim();
  if (search) filter.search = search;
  if (query.owner === "me") filter.ownerMe = true;
  if (query["name[ilike]"] !== undefined) filter.nameIlike = query["name[ilike]"];
  if (query["model[ilike]"] !== undefined) filter.modelIlike = query["model[ilike]"];
  if (query["brand[in]"]) filter.brandIn = query["brand[in]"];
  if (query["product_type_name[in]"]) filter.productTypeNameIn = query["product_type_name[in]"];
  const createdAt = range(query["created_at[ge]"], query["created_at[le]"]);
  if (createdAt) filter.createdAt = createdAt;
  const updatedAt = range(query["updated_at[ge]"], query["updated_at[le]"]);
  if (updatedAt) filter.updatedAt = updatedAt;
  const weightG = range(query["weight_g[ge]"], query["weight_g[le]"]);
  if (weightG) filter.weightG = weightG;
  const lt = query["quality_score[lt]"];
  const ge = query["quality_score[ge]"];
  if (lt !== undefined || ge !== undefined) filter.qualityScore = { ...(lt !== undefined && { lt }), ...(ge !== undefined && { ge }) };
  if (query["quality_fail[in]"]) filter.qualityFailIn = query["quality_fail[in]"];
  if (query.order_by) filter.orderBy = query.order_by;
  return filter;
}

/** The list query split into the service's filter and the page. */
export function parseProductListQuery(query: ProductListQuery): { filter: ProductFilter; page: PageQuery } {
  return { filter: productFilterFromQuery(query), page: { page: query.page, size: query.size } };
}

/** Query of `GET /v1/products/facets`: the list's filters and the repeated `fields` to count. */
export const ProductFacetsQuerySchema = z.strictObject({
  ...PRODUCT_FILTER_PARAMS,
  // A single `fields=brand` arrives as a string, a repeated one as an array.
  fields: z
    .preprocess(
      (value) => (typeof value === "string" ? [value] : value),
      z.array(z.enum(PRODUCT_FACET_FIELDS)).min(1).max(PRODUCT_FACET_FIELDS.length),
    )
    .transform((fields): ProductFacetField[] => [...new Set(fields)])
    .openapi({
      description: `Fields to count values of; repeat the parameter: ${PRODUCT_FACET_FIELDS.join(", ")}.`,
      example: ["brand", "model"],
    }),
});

export type ProductFacetsQuery = z.infer<typeof ProductFacetsQuerySchema>;

/** Query of `GET /v1/products/suggestions/brands|models`: a prefix and the page. */
export const ProductSuggestionsQuerySchema = z.strictObject({
  search: singleLineText()
    .max(LIMITS.valueLength)
    .default("")
    .openapi({ description: "Start of the value, any case; empty suggests every value.", example: "fair" }),
  ...PageQuerySchema.shape,
});

export type ProductSuggestionsQuery = z.infer<typeof ProductSuggestionsQuerySchema>;
