import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../env";
import { noSuchPath } from "../../lib/problem";
import { createRouter } from "../../lib/router";
import * as handlers from "./dev.handlers";
import * as routes from "./dev.routes";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Outside development, or when reached under any host name but loopback (a development build
 * exposed by mistake), these routes answer exactly like a path that does not exist.
 */
const developmentOnly = createMiddleware<AppEnv>(async (c, next) => {
  const local = LOOPBACK_HOSTS.has(new URL(c.req.url).hostname);
  if (!c.get("services").config.isDevelopment || !local) throw noSuchPath();
  await next();
});

export const devRouter = createRouter();
devRouter.use("*", developmentOnly);
devRouter.openapi(routes.readOutbox, handlers.getOutbox).openapi(routes.sendToOutbox, handlers.postOutbox);
