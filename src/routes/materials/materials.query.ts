import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../../lib/pagination";
import type { OrderTerm } from "../../services/category-links";
import { MATERIAL_ORDER_FIELDS, type MaterialFilter } from "../../services/materials";

// Query schemas of the material list. The objects are strict, so an unknown parameter is a 422
// pointing at `#/query/<name>`, like a malformed one. `orderByParam`, `nameIlikeParam` and
// `categoryIdParam` serve the product-type list too.

/**
 * `order_by` over `fields`: `+field` or `-field` (no sign: ascending), comma-separated, each field
 * once. A `+` sent unencoded arrives as a space, hence the trim.
 */
export function orderByParam<const Field extends string>(fields: readonly Field[], example: string) {
  return z
    .string()
    .transform((text, ctx): OrderTerm<Field>[] => {
      const terms: OrderTerm<Field>[] = [];
      for (const raw of text.split(",")) {
        const term = raw.trim();
        const name = term.replace(/^[+-]/, "");
        if (!(fields as readonly string[]).includes(name)) {
          ctx.addIssue({ code: "custom", message: `Unknown order field "${term}"; use ${fields.join(", ")}.` });
          return z.NEVER;
        }
        if (terms.some((t) => t.field === name)) {
          ctx.addIssue({ code: "custom", message: `"${name}" is given twice.` });
          return z.NEVER;
        }
        terms.push({ field: name as Field, descending: term.startsWith("-") });
      }
      return terms;
    })
    .optional()
    .openapi({
      description: `Comma list of \`+field\` (ascending; a bare field too) or \`-field\` (descending) over ${fields.join(", ")}. \`id\` always breaks ties. Default \`+name\`.`,
      example,
    });
}

export const nameIlikeParam = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .openapi({ description: "Case-insensitive substring of the name (`%` and `_` are plain characters).", example: "poly" });

export const categoryIdParam = (what: string) =>
  z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .openapi({ description: `Only ${what} linked to this category itself (links to its subcategories do not count).`, example: 12 });

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
  "name[ilike]": nameIlikeParam,
  is_crm: z
    .enum(["true", "false"])
    .transform((value) => value === "true")
    .optional()
    .openapi({ description: "Only critical raw materials (`true`) or only others (`false`).", example: "true" }),
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
