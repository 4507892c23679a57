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

export const getDocsInit = createRoute({
  method: "get",
  path: "/docs/init.js",
  hide: true,
  responses: {
    200: { description: "The docs page's start-up script.", content: { "text/javascript": { schema: z.string() } } },
  },
});

export const getDocsAsset = createRoute({
  method: "get",
  path: "/docs/assets/{bundle}/{file}",
  hide: true,
  request: { params: z.object({ bundle: z.string(), file: z.string() }) },
  responses: {
    200: { description: "A file of the pinned Swagger UI release the docs page runs on." },
    304: { description: "Not modified since the `ETag` sent in `If-None-Match`." },
    404: { description: "No such file." },
  },
});
