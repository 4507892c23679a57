import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, AppRouteHandler } from "../../env";
import { openApiDocument } from "../../lib/openapi";
import { noSuchPath } from "../../lib/problem";
import type { getDocs, getDocsAsset, getDocsInit, getOpenApi } from "./docs.routes";
import { DOCS_CSP, docsInitScript, docsPage } from "./docs-page";

const SCHEMA_PATH = "/v1/openapi.json";

export function createDocsHandlers(app: OpenAPIHono<AppEnv>) {
  const schema: AppRouteHandler<typeof getOpenApi> = (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.json(openApiDocument(app, new URL(c.req.url).origin), 200);
  };

  const docs: AppRouteHandler<typeof getDocs> = (c) => {
    c.header("Content-Security-Policy", DOCS_CSP);
    c.header("Cache-Control", "public, max-age=300");
    return c.html(docsPage(), 200);
  };

  const init: AppRouteHandler<typeof getDocsInit> = (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    c.header("Cache-Control", "public, max-age=300");
    return c.body(docsInitScript(SCHEMA_PATH), 200);
  };

  // The files are in the Workers static assets (wrangler.jsonc "assets"); the Worker runs first,
  // so they get this API's headers and its Problem Details 404. Their path names the release,
  // so a browser may keep them for good.
  const asset: AppRouteHandler<typeof getDocsAsset> = async (c) => {
    const stored = await c.get("services").bindings.ASSETS.fetch(c.req.raw);
    if (stored.status !== 200 && stored.status !== 304) throw noSuchPath();
    const response = new Response(stored.body, stored);
    response.headers.set("Cache-Control", "public, max-age=31536000, immutable");
    return response;
  };

  return { schema, docs, init, asset };
}
