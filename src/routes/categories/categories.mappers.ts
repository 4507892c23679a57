import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../lib/time";
import type { CategoryDetail, CategoryRow } from "../../services/reference/categories";
import { type CategoryTreeRow, nestCategories } from "../../services/reference/category-tree";
import type { CategoryDetailSchema, CategorySchema, CategoryTreeNode } from "./categories.schemas";

export function toCategory(row: CategoryRow): z.infer<typeof CategorySchema> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    external_id: row.external_id,
    taxonomy_id: row.taxonomy_id,
    supercategory_id: row.supercategory_id,
    created_at: isoSeconds(row.created_at * 1000),
    updated_at: isoSeconds(row.updated_at * 1000),
  };
}

export function toCategoryDetail(detail: CategoryDetail): z.infer<typeof CategoryDetailSchema> {
  const { row } = detail;
  return {
    ...toCategory(row),
    taxonomy: { id: row.taxonomy_id, name: row.taxonomy_name },
    supercategory:
      row.supercategory_id !== null && row.supercategory_name !== null ? { id: row.supercategory_id, name: row.supercategory_name } : null,
    subcategories: detail.subcategories.map(({ id, name }) => ({ id, name })),
  };
}

/** Tree rows as nested nodes, without the parent ids and levels the nesting used. */
export function toCategoryTree(rows: readonly CategoryTreeRow[]): CategoryTreeNode[] {
  return nestCategories(rows, (row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    external_id: row.external_id,
    taxonomy_id: row.taxonomy_id,
  }));
}
