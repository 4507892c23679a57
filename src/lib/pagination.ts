import { z } from "@hono/zod-openapi";

/** `page` (from 1) and `size` (1..100, default 50): the query of every list route. */
export const PageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ description: "Page number, from 1.", example: 1 }),
  size: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: "Items per page, 1 to 100.", example: 50 }),
});

export type PageQuery = z.infer<typeof PageQuerySchema>;

/**
 * Matches a page's `total` counts exactly (decisions.md, "Page totals"); past it the total is this
 * number with `total_relation: "gte"`, as search engines report hits, so that no count reads more.
 */
export const TOTAL_LIMIT = 10_000;

/** Whether `total` is the number of matches (`eq`) or a lower bound of it (`gte`). */
export const TOTAL_RELATIONS = ["eq", "gte"] as const;
export type TotalRelation = (typeof TOTAL_RELATIONS)[number];

/** The envelope of a paged list, for `schema` items. */
export function pagedSchema<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      items: z.array(item),
      total: z
        .number()
        .int()
        .openapi({
          description: `Items matching the request, over all pages: exact up to ${TOTAL_LIMIT.toLocaleString("en")}; past that ${TOTAL_LIMIT} with \`total_relation: "gte"\`.`,
        }),
      total_relation: z.enum(TOTAL_RELATIONS).openapi({
        description: `\`eq\`: \`total\` is the number of matches; \`gte\`: more than ${TOTAL_LIMIT.toLocaleString("en")} match and \`total\` is a lower bound.`,
        example: "eq",
      }),
      page: z.number().int(),
      size: z.number().int(),
      pages: z.number().int().openapi({ description: "Number of pages of `total`; a page past the last answers `items: []`." }),
    })
    .openapi(name);
}

/**
 * `{items, total, total_relation, page, size, pages}` for one page of a list of `total` items
 * (`total` may be a count that stopped past `TOTAL_LIMIT`: it is then reported as that limit,
 * `gte`).
 */
export function pageEnvelope<T>(items: T[], total: number, page: PageQuery) {
  const capped = Math.min(total, TOTAL_LIMIT);
  const total_relation: TotalRelation = total > TOTAL_LIMIT ? "gte" : "eq";
  return { items, total: capped, total_relation, page: page.page, size: page.size, pages: Math.ceil(capped / page.size) };
}

/** SQL `LIMIT` and `OFFSET` of a page. */
export function pageWindow(page: PageQuery): { limit: number; offset: number } {
  return { limit: page.size, offset: (page.page - 1) * page.size };
}
