import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../lib/time";
import type { ProductTypeDetail, ProductTypeRow } from "../../services/reference/product-types";
import { toLinkedCategory } from "../materials/materials.mappers";
import type { ProductTypeDetailSchema, ProductTypeSchema } from "./product-types.schemas";

export function toProductType(row: ProductTypeRow): z.infer<typeof ProductTypeSchema> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    created_at: isoSeconds(row.created_at * 1000),
    updated_at: isoSeconds(row.updated_at * 1000),
  };
}

export function toProductTypeDetail(detail: ProductTypeDetail): z.infer<typeof ProductTypeDetailSchema> {
  return { ...toProductType(detail.row), categories: detail.categories.map(toLinkedCategory) };
}
