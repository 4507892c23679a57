import { createRouter } from "../../../../lib/router";
import * as handlers from "./device.handlers";
import * as routes from "./device.routes";

/** The camera device's callbacks (device assertions, not user sessions); mount under `/v1`. */
export const deviceRouter = createRouter()
  .openapi(routes.uploadImage, handlers.uploadImage)
  .openapi(routes.uploadPreviewThumbnail, handlers.uploadPreviewThumbnail)
  .openapi(routes.unpairSelf, handlers.unpairSelf);
