import { createRouter } from "../../lib/router";
import * as handlers from "./users.handlers";
import * as routes from "./users.routes";

export const usersRouter = createRouter().openapi(routes.getMe, handlers.getMe).openapi(routes.updateMe, handlers.updateMe);
