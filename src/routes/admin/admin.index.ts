import { createRouter } from "../../lib/router";
import * as cacheHandlers from "./cache/cache.handlers";
import * as cacheRoutes from "./cache/cache.routes";
import * as releaseHandlers from "./releases/admin-releases.handlers";
import * as releaseRoutes from "./releases/admin-releases.routes";
import * as userHandlers from "./users/admin-users.handlers";
import * as userRoutes from "./users/admin-users.routes";

/** `/v1/admin/users...`, `/v1/admin/cache...` and `/v1/admin/releases...`; `adminOnly` (app.ts) has already checked the caller. */
export const adminRouter = createRouter()
  .openapi(userRoutes.listUsers, userHandlers.listUsers)
  .openapi(userRoutes.getUser, userHandlers.getUser)
  .openapi(userRoutes.updateUser, userHandlers.updateUser)
  .openapi(userRoutes.setRole, userHandlers.setRole)
  .openapi(userRoutes.resetMfa, userHandlers.resetMfa)
  .openapi(cacheRoutes.clearCache, cacheHandlers.clearCache)
  .openapi(releaseRoutes.createRelease, releaseHandlers.createRelease)
  .openapi(releaseRoutes.retryRelease, releaseHandlers.retryRelease)
  .openapi(releaseRoutes.retryDoi, releaseHandlers.retryDoi);
