import { createRoute, z } from "@hono/zod-openapi";

const CheckStatus = z.enum(["ok", "fail"]);

export const HealthSchema = z.object({
  status: z.enum(["healthy", "unhealthy"]),
  checks: z.object({ d1: CheckStatus, kv: CheckStatus, r2: CheckStatus }),
});

// Probes for load balancers and uptime checks: outside /v1 and not part of the public schema.
export const live = createRoute({
  method: "get",
  path: "/live",
  hide: true,
  responses: {
    200: {
      description: "The Worker answers.",
      content: { "application/json": { schema: z.object({ status: z.literal("alive") }) } },
    },
  },
});

export const health = createRoute({
  method: "get",
  path: "/health",
  hide: true,
  responses: {
    200: { description: "D1, KV and R2 answer.", content: { "application/json": { schema: HealthSchema } } },
    503: { description: "A binding failed its probe.", content: { "application/json": { schema: HealthSchema } } },
  },
});
