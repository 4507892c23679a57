import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { resolveSeriesRange, statsCategories, statsSeries, statsTotals } from "../../services/stats";
import type * as routes from "./stats.routes";

// Clients may keep an answer a minute; the server-side copy (KV, `stats`) lives five.
const CACHE_CONTROL = "public, max-age=60";

export const getStatsTotals: RouteHandler<typeof routes.getStatsTotals, AppEnv> = async (c) => {
  const body = await statsTotals(c.get("services"), new Date());
  c.header("Cache-Control", CACHE_CONTROL);
  return c.json(body, 200);
};

export const getStatsSeries: RouteHandler<typeof routes.getStatsSeries, AppEnv> = async (c) => {
  const now = new Date();
  const range = resolveSeriesRange(c.req.valid("query"), now);
  const body = await statsSeries(c.get("services"), range, now);
  c.header("Cache-Control", CACHE_CONTROL);
  return c.json(body, 200);
};

export const getStatsCategories: RouteHandler<typeof routes.getStatsCategories, AppEnv> = async (c) => {
  const body = await statsCategories(c.get("services"), c.req.valid("query"), new Date());
  c.header("Cache-Control", CACHE_CONTROL);
  return c.json(body, 200);
};
