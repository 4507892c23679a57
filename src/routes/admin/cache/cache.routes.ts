import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { CACHE_NAMESPACES } from "../../../services/caching/kv-cache";

// A plain string rather than an enum: an unknown namespace is a missing resource (404), not a malformed request (422).
const NamespaceParamsSchema = z.object({
  namespace: z.string().openapi({
    param: { name: "namespace", in: "path" },
    description: `One of ${CACHE_NAMESPACES.map((name) => `\`${name}\``).join(", ")}.`,
    example: "reference-data",
  }),
});

const CacheClearedSchema = z
  .object({
    namespace: z.enum(CACHE_NAMESPACES),
    keys_deleted: z.number().int().openapi({ description: "Cached entries removed." }),
  })
  .openapi("CacheCleared", { example: { namespace: "reference-data", keys_deleted: 12 } });

export const clearCache = createRoute({
  method: "post",
  path: "/admin/cache/clear/{namespace}",
  operationId: "adminClearCache",
  tags: ["Admin"],
  summary: "Clear a cache",
  description:
    "Deletes every cached entry of the namespace, so the next reads recompute them: `reference-data` (taxonomies, " +
    "categories, materials, product types, units) or `stats`. An unknown namespace is 404 `CACHE_NAMESPACE_NOT_FOUND`. " +
    "Audited. Superusers with TOTP only: anonymous 401, anyone else 403.",
  security: SIGNED_IN,
  request: { params: NamespaceParamsSchema },
  responses: {
    200: { description: "Cleared.", content: { "application/json": { schema: CacheClearedSchema } } },
    ...problemResponses(401, 403, 404),
  },
});
