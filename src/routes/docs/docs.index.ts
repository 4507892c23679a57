import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { createRouter } from "../../lib/router";
import { createDocsHandlers } from "./docs.handlers";
import * as routes from "./docs.routes";

/** The schema and docs page of `app`, which must be the root app so that every route is in the schema. */
export function createDocsRouter(app: OpenAPIHono<AppEnv>) {
  const handlers = createDocsHandlers(app);
  return createRouter()
    .openapi(routes.getOpenApi, handlers.schema)
    .openapi(routes.getDocs, handlers.docs)
    .openapi(routes.getDocsInit, handlers.init)
    .openapi(routes.getDocsAsset, handlers.asset);
}
