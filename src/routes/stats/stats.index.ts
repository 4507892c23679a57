import { createRouter } from "../../lib/router";
import * as handlers from "./stats.handlers";
import * as routes from "./stats.routes";

/** `GET /stats/totals|series|categories|quality`: public aggregate counts, cached under `stats`. */
export const statsRouter = createRouter()
  .openapi(routes.getStatsTotals, handlers.getStatsTotals)
  .openapi(routes.getStatsSeries, handlers.getStatsSeries)
  .openapi(routes.getStatsCategories, handlers.getStatsCategories)
  .openapi(routes.getStatsQuality, handlers.getStatsQuality);
