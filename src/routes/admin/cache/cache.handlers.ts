import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import { type CacheNamespace, clearCache as clearNamespace } from "../../../services/cache";
import type * as routes from "./cache.routes";

export const clearCache: RouteHandler<typeof routes.clearCache, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { namespace } = c.req.valid("param");
  const keysDeleted = await clearNamespace(c.get("services"), actor, namespace);
  // clearNamespace refused any name that is not a CacheNamespace.
  return c.json({ namespace: namespace as CacheNamespace, keys_deleted: keysDeleted }, 200);
};
