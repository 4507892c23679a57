import { createRouter } from "../../lib/router";
import * as handlers from "./units.handlers";
import * as routes from "./units.routes";

export const unitsRouter = createRouter().openapi(routes.listUnits, handlers.getUnits);
