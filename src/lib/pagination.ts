import { z } from "@hono/zod-openapi";

/** `page` (from 1) and `size` (1..100, default 50): the query of every list route. */
export const PageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ description: "Page number, from 1.", example: 1 }),
  size: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: "Items per page, 1 to 100.", example: 50 }),
});

export type PageQuery = z.infer<typeof PageQuerySchema>;

/** The envelope of a paged list, for `schema` items. */
export function pagedSchema<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      items: z.array(item),
      total: z.number().int().openapi({ description: "Items matching the request, over all pages." }),
      page: z.number().int(),
      size: z.number().int(),
      pages: z.number().int().openapi({ description: "Number of pages; a page past the last answers `items: []`." }),
    })
    .openapi(name);
}

/** `{items, total, page, size, pages}` for one page of a list of `total` items. */
export function pageEnvelope<T>(items: T[], total: number, page: PageQuery) {
  return { items, total, page: page.page, size: page.size, pages: Math.ceil(total / page.size) };
}

/** SQL `LIMIT` and `OFFSET` of a page. */
export function pageWindow(page: PageQuery): { limit: number; offset: number } {
  return { limit: page.size, offset: (page.page - 1) * page.size };
}
