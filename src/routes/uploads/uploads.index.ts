import { createRouter } from "../../lib/router";
import * as handlers from "./uploads.handlers";
import * as routes from "./uploads.routes";

/** Media downloads from R2 (`/uploads/images/...`, `/uploads/files/...`); mount at `/`. */
export const uploadsRouter = createRouter()
  .openapi(routes.getThumbnail, handlers.getThumbnail)
  .openapi(routes.getImage, handlers.getImage)
  .openapi(routes.getFile, handlers.getFile);
