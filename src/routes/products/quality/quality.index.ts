import { createRouter } from "../../../lib/router";
import * as handlers from "./quality.handlers";
import * as routes from "./quality.routes";

/** `GET /{products|components}/{id}/quality`: a record's quality checks (docs/quality.md). Mount under `/v1`. */
export const qualityRouter = createRouter()
  .openapi(routes.getProductQuality, handlers.getProductQuality)
  .openapi(routes.getComponentQuality, handlers.getComponentQuality);
