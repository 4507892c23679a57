import { z } from "@hono/zod-openapi";
import { TAXONOMY_DOMAINS } from "../../db/schema";
import { PageQuerySchema } from "../../lib/pagination";
import { REFERENCE_ORDER_FIELDS } from "../../services/reference/order";
import type { TaxonomyFilter } from "../../services/reference/taxonomies";
import { nameIlikeParam, orderByParam } from "../reference/reference-query";

/** Query of `GET /v1/taxonomies`: `domain`, `name[ilike]`, `order_by`, `page` and `size`. */
export const TaxonomyListQuerySchema = z.strictObject({
  domain: z.enum(TAXONOMY_DOMAINS).optional().openapi({ description: "Only taxonomies that cover this domain.", example: "materials" }),
  "name[ilike]": nameIlikeParam("metal"),
  order_by: orderByParam(REFERENCE_ORDER_FIELDS, "-created_at"),
  ...PageQuerySchema.shape,
});

export function taxonomyFilterFromQuery(query: z.infer<typeof TaxonomyListQuerySchema>): TaxonomyFilter {
  return {
    ...(query.domain !== undefined && { domain: query.domain }),
    ...(query["name[ilike]"] !== undefined && { nameIlike: query["name[ilike]"] }),
    ...(query.order_by !== undefined && { orderBy: query.order_by }),
  };
}
