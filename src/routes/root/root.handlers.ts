import type { z } from "@hono/zod-openapi";
import { accepts } from "hono/accepts";
import { html } from "hono/html";
import type { AppRouteHandler } from "../../env";
import { API_VERSION } from "../../lib/openapi";
import type { getIndex, ServiceIndexSchema } from "./root.routes";

const NAME = "relab research-data API";

function serviceIndex(origin: string): z.infer<typeof ServiceIndexSchema> {
  return {
    name: NAME,
    api_version: API_VERSION,
    api_base_url: `${origin}/v1`,
    docs_url: `${origin}/v1/docs`,
    openapi_url: `${origin}/v1/openapi.json`,
    live_url: `${origin}/live`,
    health_url: `${origin}/health`,
  };
}

// Plain HTML without styles or scripts, so the API's own CSP (nothing may load) still holds.
function indexPage(index: z.infer<typeof ServiceIndexSchema>) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${NAME}</title>
</head>
<body>
<h1>${NAME}</h1>
<p>Version ${index.api_version}. Every route lives under <code>${index.api_base_url}</code>.</p>
<ul>
<li><a href="${index.docs_url}">Interactive API reference</a></li>
<li><a href="${index.openapi_url}">OpenAPI 3.1 document</a> (build clients from it)</li>
<li><a href="${index.live_url}">Liveness probe</a> and <a href="${index.health_url}">health check</a></li>
</ul>
</body>
</html>
`;
}

export const getIndexHandler: AppRouteHandler<typeof getIndex> = async (c) => {
  const index = serviceIndex(new URL(c.req.url).origin);
  c.header("Vary", "Accept");
  c.header("Cache-Control", "public, max-age=300");
  const type = accepts(c, { header: "Accept", supports: ["application/json", "text/html"], default: "application/json" });
  if (type === "text/html") return c.html(await indexPage(index), 200);
  return c.json(index, 200);
};
