import { createRoute, z } from "@hono/zod-openapi";

// The schema and its viewer describe the API; they are not operations of it.
export const getOpenApi = createRoute({
  method: "get",
  path: "/openapi.json",
  hide: true,
  responses: {
    200: {
      description: "The OpenAPI 3.1 document of this API.",
      content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
    },
  },
});

export const getDocs = createRoute({
  method: "get",
  path: "/docs",
  hide: true,
  responses: {
    200: { description: "Interactive documentation.", content: { "text/html": { schema: z.string() } } },
  },
});
