import { createRoute, z } from "@hono/zod-openapi";
import { pagedSchema } from "../../../lib/pagination";
import { problemResponses } from "../../../lib/problem";
import { cachedRead } from "../../../middleware/read-copies";
import { PRODUCT_FACET_FIELDS, PRODUCT_QUERY_LIMITS } from "../../../services/products/query";

const SAMPLE = PRODUCT_QUERY_LIMITS.facetSample.toLocaleString("en");

import { ProductFacetsQuerySchema, ProductSuggestionsQuerySchema } from "../products.query";

export const FacetValueSchema = z
  .object({
    value: z.string(),
    count: z
      .number()
      .int()
      .openapi({
        description: `Matching base products with this value; under a filter matching more than ${SAMPLE} base products, those among the ${SAMPLE} newest matches (a lower bound).`,
      }),
  })
  .openapi("FacetValue", { example: { value: "fairphone", count: 2 } });

const facetList = (field: string) =>
  z
    .array(FacetValueSchema)
    .optional()
    .openapi({
      description: `Values of ${field}, most frequent first (ties by value), at most ${PRODUCT_QUERY_LIMITS.facetValues}; present when asked for in \`fields\`.`,
    });

/** `{brand: [{value, count}], ...}`: one member per requested field. */
export const ProductFacetsSchema = z
  .object(
    Object.fromEntries(PRODUCT_FACET_FIELDS.map((field) => [field, facetList(field)])) as Record<
      (typeof PRODUCT_FACET_FIELDS)[number],
      ReturnType<typeof facetList>
    >,
  )
  .openapi("ProductFacets", {
    example: {
      brand: [
        { value: "fairphone", count: 2 },
        { value: "nokia", count: 1 },
      ],
      model: [{ value: "3310", count: 1 }],
    },
  });

export const getProductFacets = createRoute({
  method: "get",
  path: "/products/facets",
  operationId: "getProductFacets",
  tags: ["Products"],
  summary: "Count the values of product fields",
  description:
    `For each repeated \`fields\` (${PRODUCT_FACET_FIELDS.join(", ")}), the values among the base products matching the ` +
    "list's filters (every filter applies to every field, its own too), with their counts, empty values left out " +
    "(docs/product-list.md, Facets). Without a filter the counts are exact over the whole catalogue (kept by the " +
    `database on every write). With filters they are counted over the matching base products, at most the ${SAMPLE} ` +
    `newest of them (by \`created_at\`, then id): exact when at most ${SAMPLE} match, otherwise the values and counts of ` +
    `those ${SAMPLE}, each count a lower bound (compare the list's \`total\` with the same filters). ` +
    "`owner=me` needs a signed-in user (401 otherwise); `Cache-Control: no-store`.",
  middleware: [cachedRead("catalogue")] as const,
  request: { query: ProductFacetsQuerySchema },
  responses: {
    200: { description: "The facets, one member per requested field.", content: { "application/json": { schema: ProductFacetsSchema } } },
    ...problemResponses(401, 422, 503),
  },
});

const SuggestionPageSchema = pagedSchema(z.string().openapi({ example: "fairphone" }), "SuggestionPage");

const suggestionRoute = (kind: "brands" | "models") =>
  createRoute({
    method: "get",
    path: `/products/suggestions/${kind}` as `/products/suggestions/${typeof kind}`,
    operationId: kind === "brands" ? "suggestProductBrands" : "suggestProductModels",
    tags: ["Products"],
    summary: `Autocomplete ${kind === "brands" ? "brands" : "models"}`,
    description:
      `One page of the distinct ${kind === "brands" ? "brands" : "models"} that start with \`search\` (ASCII ` +
      "case-insensitive; `%` and `_` are plain characters; empty: every value), over base products and components, " +
      "most used first, then alphabetically. Public.",
    middleware: [cachedRead("shared")] as const,
    request: { query: ProductSuggestionsQuerySchema },
    responses: {
      200: { description: "A page of values.", content: { "application/json": { schema: SuggestionPageSchema } } },
      ...problemResponses(422),
    },
  });

export const suggestProductBrands = suggestionRoute("brands");
export const suggestProductModels = suggestionRoute("models");
