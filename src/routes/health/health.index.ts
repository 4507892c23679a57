import { createRouter } from "../../lib/router";
import * as handlers from "./health.handlers";
import * as routes from "./health.routes";

export const healthRouter = createRouter().openapi(routes.live, handlers.getLive).openapi(routes.health, handlers.getHealth);
