import { z } from "@hono/zod-openapi";
import { pagedSchema } from "../../lib/pagination";

const timestamp = z.string().openapi({ example: "2026-05-01T12:00:00Z" });
const TaxonomyReferenceSchema = z
  .object({ id: z.number().int(), name: z.string() })
  .openapi("TaxonomyReference", { example: { id: 3, name: "WEEE categories" } });
const CategoryReferenceSchema = z
  .object({ id: z.number().int(), name: z.string() })
  .openapi("CategoryReference", { example: { id: 10, name: "Household appliances" } });

const EXAMPLE = {
  id: 12,
  name: "Small household appliances",
  description: null,
  external_id: "EEE-2",
  taxonomy_id: 3,
  supercategory_id: 10,
  created_at: "2026-05-01T12:00:00Z",
  updated_at: "2026-05-01T12:00:00Z",
};

export const CategorySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    external_id: z
      .string()
      .nullable()
      .openapi({ description: "The category's id in the source it was taken from; unique within its taxonomy." }),
    taxonomy_id: z.number().int(),
    supercategory_id: z.number().int().nullable().openapi({ description: "The category it sits directly below; null at the top." }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Category", { example: EXAMPLE });

export const CategoryPageSchema = pagedSchema(CategorySchema, "CategoryPage");

export const CategoryDetailSchema = CategorySchema.extend({
  taxonomy: TaxonomyReferenceSchema,
  supercategory: CategoryReferenceSchema.nullable().openapi({ description: "Null for a top-level category." }),
  subcategories: z
    .array(CategoryReferenceSchema)
    .openapi({ description: "The direct subcategories, by name; deeper levels through `/subcategories/tree`." }),
}).openapi("CategoryDetail", {
  example: {
    ...EXAMPLE,
    taxonomy: { id: 3, name: "WEEE categories" },
    supercategory: { id: 10, name: "Household appliances" },
    subcategories: [{ id: 14, name: "Coffee machines" }],
  },
});

/** A node of a tree answer: the category's own fields and its subcategories, nested the same way. */
export interface CategoryTreeNode {
  id: number;
  name: string;
  description: string | null;
  external_id: string | null;
  taxonomy_id: number;
  subcategories: CategoryTreeNode[];
}

export const CategoryTreeNodeSchema: z.ZodType<CategoryTreeNode> = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    external_id: z.string().nullable(),
    taxonomy_id: z.number().int(),
    get subcategories() {
      return z.array(CategoryTreeNodeSchema).openapi({
        description: "Its subcategories by name; `[]` at the requested depth (deeper levels are not read).",
      });
    },
  })
  .openapi("CategoryTreeNode", {
    description: "A category with its subcategories nested down to the requested depth.",
    example: {
      id: 10,
      name: "Household appliances",
      description: null,
      external_id: "EEE-1",
      taxonomy_id: 3,
      subcategories: [
        { id: 12, name: "Small household appliances", description: null, external_id: "EEE-2", taxonomy_id: 3, subcategories: [] },
      ],
    },
  });

export const CategoryTreePageSchema = pagedSchema(CategoryTreeNodeSchema, "CategoryTreePage").openapi({
  description: "A page of top-level nodes; `total` counts the top level only.",
});
