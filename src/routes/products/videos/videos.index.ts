import { createRouter } from "../../../lib/router";
import * as handlers from "./videos.handlers";
import * as routes from "./videos.routes";

/** Videos of base products (`/products/{id}/videos[/{video_id}]`); mount under `/v1`. */
export const videosRouter = createRouter()
  .openapi(routes.listVideos, handlers.listVideos)
  .openapi(routes.addVideo, handlers.addVideo)
  .openapi(routes.getVideo, handlers.getVideo)
  .openapi(routes.updateVideo, handlers.updateVideo)
  .openapi(routes.deleteVideo, handlers.deleteVideo)
  .openapi(routes.addComponentVideo, handlers.addComponentVideo);
