import { createMiddleware } from "hono/factory";
import { createDb } from "../db/client";
import type { AppEnv } from "../env";
import { ensureBootstrapSuperuser } from "../services/bootstrap";

// One run per database binding per isolate; a failed run is forgotten so the next request retries.
const runs = new WeakMap<object, Promise<unknown>>();

/**
 * Makes sure the configured bootstrap superuser exists before the request is answered. Its D1
 * queries go through their own client, so they are not charged to the request's round trips.
 */
export const ensureBootstrap = createMiddleware<AppEnv>(async (c, next) => {
  let run = runs.get(c.env.DB);
  if (!run) {
    run = ensureBootstrapSuperuser(createDb(c.env.DB).db, c.var.config, c.var.log);
    runs.set(c.env.DB, run);
    run.catch(() => runs.delete(c.env.DB));
  }
  await run;
  await next();
});
