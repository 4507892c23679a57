import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../../lib/pagination";
import { MATERIAL_ORDER_FIELDS, type MaterialFilter } from "../../services/reference/materials";
import { categoryIdParam, flagParam, nameIlikeParam, orderByParam } from "../reference/reference-query";

// Digits with an optional fraction: `z.coerce.number()` would read "" as 0 and accept "1e3".
const densityBound = (description: string, example: string) =>
  z
    .string()
    .regex(/^(?:\d+(?:\.\d+)?|\.\d+)$/, "Expected a non-negative decimal number.")
    .max(20)
    .transform(Number)
    .optional()
    .openapi({ description, example });

/** Query of `GET /v1/materials`. */
export const MaterialListQuerySchema = z.strictObject({
  "name[ilike]": nameIlikeParam("poly"),
  is_crm: flagParam("Only critical raw materials (`true`) or only others (`false`)."),
  "density_kg_m3[ge]": densityBound("Density in kg/m³ at least this (materials of unknown density never match).", "1000"),
  "density_kg_m3[le]": densityBound("Density in kg/m³ at most this (materials of unknown density never match).", "8000"),
  category_id: categoryIdParam("materials"),
  order_by: orderByParam(MATERIAL_ORDER_FIELDS, "-density_kg_m3,name"),
  ...PageQuerySchema.shape,
});

export type MaterialListQuery = z.infer<typeof MaterialListQuerySchema>;

/** The validated query as the service's filter. */
export function materialFilterFromQuery(query: MaterialListQuery): MaterialFilter {
  const filter: MaterialFilter = {};
  if (query["name[ilike]"] !== undefined) filter.nameIlike = query["name[ilike]"];
  if (query.is_crm !== undefined) filter.isCrm = query.is_crm;
  const ge = query["density_kg_m3[ge]"];
  const le = query["density_kg_m3[le]"];
  if (ge !== undefined || le !== undefined) filter.density = { ...(ge !== undefined && { ge }), ...(le !== undefined && { le }) };
  if (query.category_id !== undefined) filter.categoryId = query.category_id;
  if (query.order_by) filter.orderBy = query.order_by;
  return filter;
}
