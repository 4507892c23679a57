import { z } from "@hono/zod-openapi";
import { singleLineText } from "../../lib/text";
import type { OrderTerm } from "../../services/reference/order";

// Query pieces shared by the lists of taxonomies, categories, materials and product types. Their
// query objects are strict, so an unknown parameter is a 422 at `#/query/<name>`, like a
// malformed one.

/**
 * `order_by`: a comma list of `+field` or `-field` (a bare field ascends) over `fields`, each field
 * once. A `+` sent unencoded arrives as a space, hence the trim.
 */
export function orderByParam<const F extends string>(fields: readonly F[], example: string) {
  return z
    .string()
    .transform((text, ctx): OrderTerm<F>[] => {
      const terms: OrderTerm<F>[] = [];
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
        terms.push({ field: name as F, descending: term.startsWith("-") });
      }
      return terms;
    })
    .optional()
    .openapi({
      description: `Comma list of \`+field\` (ascending; a bare field too) or \`-field\` (descending) over ${fields.join(", ")}. \`id\` always breaks ties. Default \`+name\` (any case).`,
      example,
    });
}

/** `name[ilike]`: a case-insensitive substring of the name; `example` fits the kind listed. */
export const nameIlikeParam = (example: string) =>
  singleLineText()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: "Case-insensitive substring of the name (`%` and `_` are plain characters).", example });

/** A positive integer id as a query parameter. */
export const idParam = (description: string, example: number) =>
  z.coerce.number().int().positive().optional().openapi({ description, example });

/** `category_id` of the material and product-type lists: `what` is the kind listed, plural. */
export const categoryIdParam = (what: string) =>
  idParam(`Only ${what} linked to this category itself (links to its subcategories do not count).`, 12);

/** `true` or `false`, nothing else. */
export const flagParam = (description: string) =>
  z
    .enum(["true", "false"])
    .transform((value) => value === "true")
    .optional()
    .openapi({ description, example: "true" });

/** The query of a single read: no parameters at all, since each distinct query string would be a cache entry of its own. */
export const NoQuerySchema = z.strictObject({});
