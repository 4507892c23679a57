import { createRoute, z } from "@hono/zod-openapi";

export const ServiceIndexSchema = z.object({
  name: z.string(),
  api_version: z.string(),
  api_base_url: z.string(),
  docs_url: z.string(),
  openapi_url: z.string(),
  live_url: z.string(),
  health_url: z.string(),
});

// What someone who opens the bare origin (the address wrangler prints) needs: where the API, its
// reference and its probes are. Outside /v1 and not part of the public schema, like the probes.
export const getIndex = createRoute({
  method: "get",
  path: "/",
  hide: true,
  responses: {
    200: {
      description: "Where the API, its documentation and its probes are: JSON, or a page of links for a browser.",
      content: { "application/json": { schema: ServiceIndexSchema }, "text/html": { schema: z.string() } },
    },
  },
});
