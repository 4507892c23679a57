import { z } from "@hono/zod-openapi";

/** `{id}` in a path: a record's (or another resource's) positive integer id. */
export const IdParamsSchema = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "id", in: "path" }, example: 17 }),
});
