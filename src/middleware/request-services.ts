import { createMiddleware } from "hono/factory";
import { loadConfig } from "../config";
import { createDb } from "../db/client";
import type { AppEnv } from "../env";

/** Builds what handlers use, once per request: the parsed configuration and a round-trip-counting database client. */
export const requestServices = createMiddleware<AppEnv>(async (c, next) => {
  c.set("config", loadConfig(c.env));
  const { db, roundTrips } = createDb(c.env.DB);
  c.set("db", db);
  c.set("roundTrips", roundTrips);
  await next();
});
