import { version as SWAGGER_UI_VERSION } from "swagger-ui-dist/package.json";

/** Where the Worker serves the pinned Swagger UI files (copied by scripts/build-docs-assets.mjs into the ASSETS directory). */
export const SWAGGER_UI_PATH = `/v1/docs/assets/swagger-ui-${SWAGGER_UI_VERSION}`;

/** The page's own start-up script: a file of this origin rather than inline, so the CSP needs no nonce. */
export const DOCS_INIT_PATH = "/v1/docs/init.js";

/**
 * The Content-Security-Policy of the docs page: everything from this origin only. `data:` images
 * are Swagger UI's icons, which its stylesheet carries inline; its React code sets styles through
 * the DOM, which a CSP does not restrict.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** HTML of the interactive docs page. */
export function docsPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relab API docs</title>
<link rel="icon" type="image/png" href="${SWAGGER_UI_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${SWAGGER_UI_PATH}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"><noscript>This page needs JavaScript. The schema itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript></div>
<script src="${SWAGGER_UI_PATH}/swagger-ui-bundle.js"></script>
<script src="${DOCS_INIT_PATH}"></script>
</body>
</html>
`;
}

/**
 * The start-up script for the schema at `schemaUrl`. No validator badge (it would send the schema
 * to a third-party service); credentials go along so "Try it out" works with a session cookie.
 */
export function docsInitScript(schemaUrl: string): string {
  const options = { url: schemaUrl, dom_id: "#swagger-ui", deepLinking: true, withCredentials: true, validatorUrl: null };
  return `window.ui = SwaggerUIBundle(${JSON.stringify(options)});\n`;
}
