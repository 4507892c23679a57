import type { AppRouteHandler } from "../../env";
import { resolveSeriesRange, statsCategories, statsQuality, statsSeries, statsTotals } from "../../services/reference/stats";
import type * as routes from "./stats.routes";

// Clients may keep an answer a minute; the server-side copy (KV, `stats`) lives five.
const CACHE_CONTROL = "public, max-age=60";

export const getStatsTotals: AppRouteHandler<typeof routes.getStatsTotals> = async (c) => {
  const body = await statsTotals(c.get("services"), new Date());
  c.header("Cache-Control", CACHE_CONTROL);
  return c.json(body, 200);
};

export const getStatsSeries: AppRouteHandler<typeof routes.getStatsSeries> = async (c) => {
  const now = new Date();
  const range = resolveSeriesRange(c.req.valid("query"), now);
  const body = await statsSeries(c.get("services"), range, now);
  c.header("Cache-Control", CACHE_CONTROL);
  return c.json(body, 200);
};

export const getStatsCategories: AppRouteHandler<typeof routes.getStatsCategories> = async (c) => {
  const body = await statsCategories(c.get("services"), c.req.valid("query"), new Date());
  c.header("Cache-Control", CACHE_CONTROL);
  return c.json(body, 200);
};

export const getStatsQuality: AppRouteHandler<typeof routes.getStatsQuality> = async (c) => {
  const body = await statsQuality(c.get("services"), new Date());
  // Current on the server after every write: a client asks again rather than keep a copy.
  c.header("Cache-Control", "public, no-cache");
  return c.json(body, 200);
};
