import { createRoute } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";
import { cacheResponse } from "../../middleware/kv-cache";
import { IdParamsSchema } from "../../schemas/params";
import { MAX_CATEGORY_DEPTH } from "../../services/reference/category-tree";
import { CategoryTreeQuerySchema, TaxonomyCategoryListQuerySchema } from "../categories/categories.query";
import { CategoryPageSchema, CategoryTreePageSchema } from "../categories/categories.schemas";
import { CACHED_READ } from "../reference/reference-http";
import { TaxonomyListQuerySchema } from "./taxonomies.query";
import { TaxonomyDetailSchema, TaxonomyPageSchema } from "./taxonomies.schemas";

const NOT_FOUND = "An unknown taxonomy id: 404 `TAXONOMY_NOT_FOUND`.";

export const listTaxonomies = createRoute({
  method: "get",
  path: "/taxonomies",
  operationId: "listTaxonomies",
  tags: ["Reference data"],
  summary: "List taxonomies",
  description: `One page of taxonomies, filtered and ordered as the parameters say (default \`+name\`). ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { query: TaxonomyListQuerySchema },
  responses: {
    200: { description: "A page of taxonomies.", content: { "application/json": { schema: TaxonomyPageSchema } } },
    ...problemResponses(422),
  },
});

export const getTaxonomy = createRoute({
  method: "get",
  path: "/taxonomies/{id}",
  operationId: "getTaxonomy",
  tags: ["Reference data"],
  summary: "Read a taxonomy",
  description: `The taxonomy with the number of its categories (every level). ${NOT_FOUND} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema },
  responses: {
    200: { description: "The taxonomy.", content: { "application/json": { schema: TaxonomyDetailSchema } } },
    ...problemResponses(404, 422),
  },
});

export const listTaxonomyCategories = createRoute({
  method: "get",
  path: "/taxonomies/{id}/categories",
  operationId: "listTaxonomyCategories",
  tags: ["Reference data"],
  summary: "List the categories of a taxonomy",
  description:
    "One page of the taxonomy's categories of every level (`is_root=true`: the top level only), with the filters of " +
    `\`GET /v1/categories\` less \`taxonomy_id\`. ${NOT_FOUND} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema, query: TaxonomyCategoryListQuerySchema },
  responses: {
    200: { description: "A page of categories.", content: { "application/json": { schema: CategoryPageSchema } } },
    ...problemResponses(404, 422),
  },
});

export const getTaxonomyCategoryTree = createRoute({
  method: "get",
  path: "/taxonomies/{id}/categories/tree",
  operationId: "getTaxonomyCategoryTree",
  tags: ["Reference data"],
  summary: "Read the category tree of a taxonomy",
  description:
    "A page of the taxonomy's top-level categories, each with `subcategories` nested down to `recursion_depth` levels " +
    `(1 to ${MAX_CATEGORY_DEPTH}, default 1: the direct subcategories, each with \`subcategories: []\`); siblings by name, ` +
    `then id. \`page\` and \`size\` page through the top level and \`total\` counts it. One database round trip. ${NOT_FOUND} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema, query: CategoryTreeQuerySchema },
  responses: {
    200: {
      description: "A page of top-level categories, each with its subcategories.",
      content: { "application/json": { schema: CategoryTreePageSchema } },
    },
    ...problemResponses(404, 422),
  },
});
