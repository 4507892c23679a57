import { createRouter } from "../../../lib/router";
import * as handlers from "./deletion.handlers";
import * as routes from "./deletion.routes";

/** Account deletion, by the account itself and by a superuser (`/admin/...`, guarded by `adminOnly`). */
export const accountDeletionRouter = createRouter()
  .openapi(routes.deleteMe, handlers.deleteMe)
  .openapi(routes.adminDeleteUser, handlers.adminDeleteUser);
