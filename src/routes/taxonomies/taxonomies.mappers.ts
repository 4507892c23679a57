import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../lib/time";
import type { TaxonomyDomain, TaxonomyRow } from "../../services/reference/taxonomies";
import type { TaxonomyDetailSchema, TaxonomySchema } from "./taxonomies.schemas";

export function toTaxonomy(row: TaxonomyRow): z.infer<typeof TaxonomySchema> {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    description: row.description,
    domains: JSON.parse(row.domains) as TaxonomyDomain[],
    source: row.source,
    created_at: isoSeconds(row.created_at * 1000),
    updated_at: isoSeconds(row.updated_at * 1000),
  };
}

export function toTaxonomyDetail(row: TaxonomyRow & { category_count: number }): z.infer<typeof TaxonomyDetailSchema> {
  return { ...toTaxonomy(row), category_count: row.category_count };
}
