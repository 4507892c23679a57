import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../../lib/pagination";
import { singleLineText } from "../../lib/text";
import type { CategoryFilter } from "../../services/reference/categories";
import { DEFAULT_CATEGORY_DEPTH, MAX_CATEGORY_DEPTH } from "../../services/reference/category-tree";
import { REFERENCE_ORDER_FIELDS } from "../../services/reference/order";
import { flagParam, idParam, nameIlikeParam, orderByParam } from "../reference/reference-query";

/** Query of `GET /v1/categories`: the filters, `order_by`, `page` and `size`. */
export const CategoryListQuerySchema = z.strictObject({
  taxonomy_id: idParam("Only categories of this taxonomy.", 3),
  supercategory_id: idParam("Only the direct subcategories of this category.", 12),
  is_root: flagParam("`true`: only top-level categories; `false`: only subcategories."),
  external_id: singleLineText()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: "Only the category with this id in its source taxonomy (exact).", example: "ELEC" }),
  "name[ilike]": nameIlikeParam("metal"),
  order_by: orderByParam(REFERENCE_ORDER_FIELDS, "-created_at"),
  ...PageQuerySchema.shape,
});

/** Query of `GET /v1/taxonomies/{id}/categories`: the list's, less `taxonomy_id` (the path names it: 422 here). */
export const TaxonomyCategoryListQuerySchema = CategoryListQuerySchema.omit({ taxonomy_id: true });

/** Query of `GET /v1/categories/{id}/subcategories`: the list's, less what the path fixes. */
export const SubcategoryListQuerySchema = CategoryListQuerySchema.omit({ taxonomy_id: true, supercategory_id: true, is_root: true });

type ListQuery = Partial<z.infer<typeof CategoryListQuerySchema>>;

/** The validated query as the service's filter. */
export function categoryFilterFromQuery(query: ListQuery): CategoryFilter {
  return {
    ...(query.taxonomy_id !== undefined && { taxonomyId: query.taxonomy_id }),
    ...(query.supercategory_id !== undefined && { supercategoryId: query.supercategory_id }),
    ...(query.is_root !== undefined && { isRoot: query.is_root }),
    ...(query.external_id !== undefined && { externalId: query.external_id }),
    ...(query["name[ilike]"] !== undefined && { nameIlike: query["name[ilike]"] }),
    ...(query.order_by !== undefined && { orderBy: query.order_by }),
  };
}

const recursionDepth = z.coerce
  .number()
  .int()
  .min(1)
  .max(MAX_CATEGORY_DEPTH)
  .default(DEFAULT_CATEGORY_DEPTH)
  .openapi({
    description:
      `Levels of subcategories below each top-level node, 1 to ${MAX_CATEGORY_DEPTH}; default ${DEFAULT_CATEGORY_DEPTH}: ` +
      "the top level with its direct subcategories, whose own `subcategories` are `[]`.",
    example: 2,
  });

/** Query of a tree under a taxonomy or a category: `recursion_depth`, `page` and `size` (of the top level). */
export const CategoryTreeQuerySchema = z.strictObject({ recursion_depth: recursionDepth, ...PageQuerySchema.shape });

/** Query of `GET /v1/categories/tree`: the tree's, and `taxonomy_id` to narrow it to one taxonomy. */
export const AllCategoriesTreeQuerySchema = CategoryTreeQuerySchema.extend({
  taxonomy_id: idParam("Only the tree of this taxonomy (an unknown id gives an empty page).", 3),
});
