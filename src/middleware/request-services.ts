import { createMiddleware } from "hono/factory";
import { loadConfig } from "../config";
import { createDb } from "../db/client";
import type { AppEnv } from "../env";
import { createEmailSender } from "../services/email";
import { createLimiter } from "../services/rate-limiter";

/** Builds what handlers use, once per request: the parsed configuration, a round-trip-counting database client, the email sender and the counter store. */
export const requestServices = createMiddleware<AppEnv>(async (c, next) => {
  c.set("config", loadConfig(c.env));
  const { db, roundTrips } = createDb(c.env.DB);
  c.set("db", db);
  c.set("roundTrips", roundTrips);
  c.set("email", createEmailSender(c.get("config"), c.env.KV, c.get("log")));
  c.set("limiter", createLimiter(c.env.RATE_LIMITER, c.get("config").rateLimitStoreTimeoutMs));
  c.set("authFlow", false);
  await next();
});
