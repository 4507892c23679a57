import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { ServiceDeps } from "../services/deps";

/** The request's services, as the account services take them. */
export function serviceDeps(c: Context<AppEnv>): ServiceDeps {
  return {
    db: c.get("db"),
    config: c.get("config"),
    log: c.get("log"),
    email: c.get("email"),
    limiter: c.get("limiter"),
    defer: (work) => c.executionCtx.waitUntil(work),
  };
}
