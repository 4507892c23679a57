// Swagger UI from jsDelivr, pinned to one version with Subresource Integrity, so a tampered CDN
// file is refused by the browser. Hashes are of the npm package's files, which jsDelivr serves as is.
const SWAGGER_UI = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5.35.0";
const SCRIPT_SRI = "sha384-gjRm0bEPMeTmMh5jT2cHccIwCUZSTd8YC+j0d0sXw0MdGEfScduGpSyF3ZSSLkX9";
const STYLE_SRI = "sha384-WlYgdmXYOOBWL5apwjDEZwN+U3HmXSSu5R6V5aGxEcf7z+KuRNwBhoxKVN1i3D5I";

/** The Content-Security-Policy of the docs page: the pinned CDN, one nonce'd inline script, calls to this origin only. */
export function docsCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' https://cdn.jsdelivr.net`,
    "style-src https://cdn.jsdelivr.net 'unsafe-inline'",
    "img-src 'self' data: https://cdn.jsdelivr.net",
    "font-src https://cdn.jsdelivr.net",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** HTML of the interactive docs page for the schema at `schemaUrl`. */
export function docsPage(schemaUrl: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relab API docs</title>
<link rel="stylesheet" href="${SWAGGER_UI}/swagger-ui.css" integrity="${STYLE_SRI}" crossorigin="anonymous">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${SWAGGER_UI}/swagger-ui-bundle.js" integrity="${SCRIPT_SRI}" crossorigin="anonymous"></script>
<script nonce="${nonce}">
window.ui = SwaggerUIBundle({ url: ${JSON.stringify(schemaUrl)}, dom_id: "#swagger-ui", withCredentials: true, deepLinking: true });
</script>
</body>
</html>
`;
}
