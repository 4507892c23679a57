import type { AppRouteHandler } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import { type CacheNamespace, clearCache as clearNamespace } from "../../../services/caching/kv-cache";
import type * as routes from "./cache.routes";

export const clearCache: AppRouteHandler<typeof routes.clearCache> = async (c) => {
  const actor = requireAdmin(c);
  const { namespace } = c.req.valid("param");
  const keysDeleted = await clearNamespace(c.get("services"), actor, namespace);
  // clearNamespace refused any name that is not a CacheNamespace.
  return c.json({ namespace: namespace as CacheNamespace, keys_deleted: keysDeleted }, 200);
};
