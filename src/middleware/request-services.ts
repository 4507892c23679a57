import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import type { Plugin } from "../plugin";
import { buildServices } from "../services/build-services";

/** Builds the request's service container (src/container.ts) once, before anything that needs it; `plugins` are the Worker's installed plugins. */
export function requestServices(plugins: readonly Plugin[]) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("services", buildServices(c.env, { log: c.get("log"), defer: (work) => c.executionCtx.waitUntil(work), plugins }));
    c.set("authFlow", false);
    await next();
  });
}
