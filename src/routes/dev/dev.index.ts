import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { noSuchPath } from "../../lib/problem";
import { createRouter } from "../../lib/router";
import * as handlers from "./dev.handlers";
import * as routes from "./dev.routes";

/** Outside development these routes answer exactly like a path that does not exist. */
const developmentOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("config").isDevelopment) throw noSuchPath();
  await next();
});

export const devRouter = createRouter();
devRouter.use("*", developmentOnly);
devRouter.openapi(routes.readOutbox, handlers.getOutbox).openapi(routes.sendToOutbox, handlers.postOutbox);
