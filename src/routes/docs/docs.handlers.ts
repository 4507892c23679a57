import type { OpenAPIHono, RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { toBase64NoPad } from "../../lib/encoding";
import { openApiDocument } from "../../lib/openapi";
import { docsCsp, docsPage } from "./docs-page";
import type { getDocs, getOpenApi } from "./docs.routes";

export function createDocsHandlers(app: OpenAPIHono<AppEnv>) {
  const schema: RouteHandler<typeof getOpenApi, AppEnv> = (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.json(openApiDocument(app, new URL(c.req.url).origin), 200);
  };

  const docs: RouteHandler<typeof getDocs, AppEnv> = (c) => {
    const nonce = toBase64NoPad(crypto.getRandomValues(new Uint8Array(16)));
    c.header("Content-Security-Policy", docsCsp(nonce));
    return c.html(docsPage("/v1/openapi.json", nonce), 200);
  };

  return { schema, docs };
}
