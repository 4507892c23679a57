import { createRoute } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";
import { cacheResponse } from "../../middleware/kv-cache";
import { IdParamsSchema } from "../../schemas/params";
import { MAX_CATEGORY_DEPTH } from "../../services/reference/category-tree";
import { CACHED_READ } from "../reference/reference-http";
import {
  AllCategoriesTreeQuerySchema,
  CategoryListQuerySchema,
  CategoryTreeQuerySchema,
  SubcategoryListQuerySchema,
} from "./categories.query";
import { CategoryDetailSchema, CategoryPageSchema, CategoryTreePageSchema } from "./categories.schemas";

const NOT_FOUND = "An unknown category id: 404 `CATEGORY_NOT_FOUND`.";
const TREE =
  `Each top-level node carries \`subcategories\` nested down to \`recursion_depth\` levels (1 to ${MAX_CATEGORY_DEPTH}, ` +
  "default 1: the direct subcategories, each with `subcategories: []`); siblings by name, then id. `page` and `size` page " +
  "through the top level and `total` counts it. One database round trip.";

export const listCategories = createRoute({
  method: "get",
  path: "/categories",
  operationId: "listCategories",
  tags: ["Reference data"],
  summary: "List categories",
  description: `One page of categories of every level, filtered and ordered as the parameters say (default \`+name\`). ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { query: CategoryListQuerySchema },
  responses: {
    200: { description: "A page of categories.", content: { "application/json": { schema: CategoryPageSchema } } },
    ...problemResponses(422),
  },
});

// Declared before `/categories/{id}`, which would otherwise take `tree` for an id.
export const getCategoryTree = createRoute({
  method: "get",
  path: "/categories/tree",
  operationId: "getCategoryTree",
  tags: ["Reference data"],
  summary: "Read the category trees",
  description: `A page of the top-level categories of every taxonomy (\`taxonomy_id\` narrows it to one). ${TREE} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { query: AllCategoriesTreeQuerySchema },
  responses: {
    200: {
      description: "A page of top-level categories, each with its subcategories.",
      content: { "application/json": { schema: CategoryTreePageSchema } },
    },
    ...problemResponses(422),
  },
});

export const getCategory = createRoute({
  method: "get",
  path: "/categories/{id}",
  operationId: "getCategory",
  tags: ["Reference data"],
  summary: "Read a category",
  description: `The category with its taxonomy, its supercategory (null at the top) and its direct subcategories. ${NOT_FOUND} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema },
  responses: {
    200: { description: "The category.", content: { "application/json": { schema: CategoryDetailSchema } } },
    ...problemResponses(404, 422),
  },
});

export const listSubcategories = createRoute({
  method: "get",
  path: "/categories/{id}/subcategories",
  operationId: "listSubcategories",
  tags: ["Reference data"],
  summary: "List the direct subcategories of a category",
  description: `One page of the categories directly below the category (default order \`+name\`). ${NOT_FOUND} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema, query: SubcategoryListQuerySchema },
  responses: {
    200: { description: "A page of subcategories.", content: { "application/json": { schema: CategoryPageSchema } } },
    ...problemResponses(404, 422),
  },
});

export const getSubcategoryTree = createRoute({
  method: "get",
  path: "/categories/{id}/subcategories/tree",
  operationId: "getSubcategoryTree",
  tags: ["Reference data"],
  summary: "Read the tree below a category",
  description: `A page of the category's direct subcategories as the top level. ${TREE} ${NOT_FOUND} ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema, query: CategoryTreeQuerySchema },
  responses: {
    200: {
      description: "A page of subcategories, each with its own nested.",
      content: { "application/json": { schema: CategoryTreePageSchema } },
    },
    ...problemResponses(404, 422),
  },
});
