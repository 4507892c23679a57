import type { BaseEnv } from "../../env";
import { createRouter } from "../../lib/router";
import * as handlers from "./profiles.handlers";
import * as routes from "./profiles.routes";

/** Public profiles and user-scoped product lists. */
export const profilesRouter = createRouter<BaseEnv>()
  .openapi(routes.getProfile, handlers.getProfile)
  .openapi(routes.listUserProducts, handlers.listUserProducts);
