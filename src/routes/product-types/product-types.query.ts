import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../../lib/pagination";
import { REFERENCE_ORDER_FIELDS } from "../../services/reference/order";
import type { ProductTypeFilter } from "../../services/reference/product-types";
import { categoryIdParam, nameIlikeParam, orderByParam } from "../reference/reference-query";

/** Query of `GET /v1/product-types`; strict, so an unknown parameter is a 422. */
export const ProductTypeListQuerySchema = z.strictObject({
  "name[ilike]": nameIlikeParam("poly"),
  category_id: categoryIdParam("product types"),
  order_by: orderByParam(REFERENCE_ORDER_FIELDS, "-created_at"),
  ...PageQuerySchema.shape,
});

export type ProductTypeListQuery = z.infer<typeof ProductTypeListQuerySchema>;

/** The validated query as the service's filter. */
export function productTypeFilterFromQuery(query: ProductTypeListQuery): ProductTypeFilter {
  const filter: ProductTypeFilter = {};
  if (query["name[ilike]"] !== undefined) filter.nameIlike = query["name[ilike]"];
  if (query.category_id !== undefined) filter.categoryId = query.category_id;
  if (query.order_by) filter.orderBy = query.order_by;
  return filter;
}
