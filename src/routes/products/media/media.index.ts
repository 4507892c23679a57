import { createRouter } from "../../../lib/router";
import type { MediaKind } from "../../../services/media/storage";
import type { RecordKind } from "../../../services/products/records";
import { mediaHandlers } from "./media.handlers";
import { mediaRoutes } from "./media.routes";

const mount = (router: ReturnType<typeof createRouter>, kind: RecordKind, media: MediaKind) => {
  const routes = mediaRoutes(kind, media);
  const handlers = mediaHandlers(kind, media);
  return router
    .openapi(routes.list, handlers.list)
    .openapi(routes.upload, handlers.upload)
    .openapi(routes.get, handlers.get)
    .openapi(routes.remove, handlers.remove);
};

/**
 * Images and research files of base products and components:
 * `GET|POST /{products|components}/{id}/{images|files}` and `GET|DELETE .../{image_id|file_id}`. Mount under `/v1`.
 */
export const mediaRouter = (["product", "component"] as const).reduce(
  (router, kind) => mount(mount(router, kind, "images"), kind, "files"),
  createRouter(),
);
