import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../lib/time";
import type { LinkedCategoryRow } from "../../services/reference/category-links";
import type { MaterialDetail, MaterialRow } from "../../services/reference/materials";
import type { LinkedCategorySchema, MaterialDetailSchema, MaterialSchema } from "./materials.schemas";

export function toLinkedCategory(row: LinkedCategoryRow): z.infer<typeof LinkedCategorySchema> {
  return { id: row.id, name: row.name, taxonomy_id: row.taxonomy_id };
}

export function toMaterial(row: MaterialRow): z.infer<typeof MaterialSchema> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    density_kg_m3: row.density_kg_m3,
    is_crm: row.is_crm === 1,
    created_at: isoSeconds(row.created_at * 1000),
    updated_at: isoSeconds(row.updated_at * 1000),
  };
}

export function toMaterialDetail(detail: MaterialDetail): z.infer<typeof MaterialDetailSchema> {
  return { ...toMaterial(detail.row), categories: detail.categories.map(toLinkedCategory) };
}
