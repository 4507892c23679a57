import { createRouter } from "../../lib/router";
import * as cacheHandlers from "./cache/cache.handlers";
import * as cacheRoutes from "./cache/cache.routes";
import * as userHandlers from "./users/admin-users.handlers";
import * as userRoutes from "./users/admin-users.routes";

/** `/v1/admin/users...` and `/v1/admin/cache...`; `adminOnly` (app.ts) has already checked the caller. */
export const adminRouter = createRouter()
  .openapi(userRoutes.listUsers, userHandlers.listUsers)
  .openapi(userRoutes.getUser, userHandlers.getUser)
  .openapi(userRoutes.updateUser, userHandlers.updateUser)
  .openapi(userRoutes.setRole, userHandlers.setRole)
  .openapi(userRoutes.resetMfa, userHandlers.resetMfa)
  .openapi(cacheRoutes.clearCache, cacheHandlers.clearCache);
