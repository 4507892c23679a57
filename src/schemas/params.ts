import { z } from "@hono/zod-openapi";

/** `{id}` in a path: a record's (or another resource's) positive integer id. */
export const IdParamsSchema = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "id", in: "path" }, example: 17 }),
});

/**
 * The query of a read that takes none: any parameter is a 422. A cached read keys its copies on
 * the query as sent, so an ignored parameter would make a copy of its own (docs/storage.md
 * "Cached reads").
 */
export const NoQuerySchema = z.strictObject({});
