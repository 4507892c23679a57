import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";

/** Marks the request as an auth flow: a token-store (D1) failure then answers 503, never anything that passes. */
export const authFlow = createMiddleware<AppEnv>(async (c, next) => {
  c.set("authFlow", true);
  await next();
});
