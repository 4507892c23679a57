import { describe, expect, it } from "vitest";
import { SWAGGER_UI_PATH as SWAGGER_UI } from "../../../src/routes/docs/docs-page";
import { api, expectProblem, ORIGIN, roundTrips } from "../../support/http";

interface Operation {
  operationId?: string;
  tags?: string[];
  responses: Record<string, unknown>;
}
interface Schema {
  openapi: string;
  info: { title: string; version: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, Record<string, string>> };
}

async function schema(): Promise<Schema> {
  const response = await api("/v1/openapi.json");
  expect(response.status).toBe(200);
  return (await response.json()) as Schema;
}

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document served for this origin", async () => {
    const document = await schema();
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(document.servers).toEqual([{ url: ORIGIN, description: "This deployment" }]);
  });

  it("gives every operation an operationId and a declared tag", async () => {
    const document = await schema();
    const tagNames = new Set(document.tags.map((tag) => tag.name));
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item));
    expect(operations.length).toBeGreaterThan(0);
    for (const operation of operations) {
      expect(operation.operationId).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(operation.tags?.length).toBeGreaterThan(0);
      for (const tag of operation.tags!) expect(tagNames).toContain(tag);
    }
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("lists full /v1 paths (and the /uploads downloads), and keeps development and probe routes out", async () => {
    const paths = Object.keys((await schema()).paths);
    expect(paths).toContain("/v1/units");
    expect(paths).toContain("/uploads/images/{key}");
    for (const path of paths) expect(path.startsWith("/v1/") || path.startsWith("/uploads/")).toBe(true);
  });

  it("declares the bearer and cookie security schemes and the shared problem schema", async () => {
    const { components } = await schema();
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(components.securitySchemes.cookieAuth).toMatchObject({
      type: "apiKey",
      in: "cookie",
      name: "__Host-relab-auth",
    });
    expect(components.schemas.ProblemDetails).toBeDefined();
    expect(components.schemas.UnitList).toBeDefined();
  });
});

describe("header parameters in /v1/openapi.json", () => {
  interface Parameter {
    name: string;
    in: string;
    required?: boolean;
  }
  async function headers(path: string, method: string): Promise<Parameter[]> {
    const operation = (await schema()).paths[path]![method] as Operation & { parameters?: Parameter[] };
    // Header names are case-insensitive: compare them lower-cased.
    return (operation.parameters ?? [])
      .filter((parameter) => parameter.in === "header")
      .map((parameter) => ({ ...parameter, name: parameter.name.toLowerCase() }));
  }

  it("marks If-Match required on the PATCH of products and components, as the API answers 428 without it", async () => {
    for (const path of ["/v1/products/{id}", "/v1/components/{id}"]) {
      expect(await headers(path, "patch"), path).toEqual([expect.objectContaining({ name: "if-match", required: true })]);
    }
  });

  it("keeps Idempotency-Key optional on the creates, as a create without one is served", async () => {
    for (const path of ["/v1/products", "/v1/products/{id}/components"]) {
      expect(await headers(path, "post"), path).toEqual([expect.objectContaining({ name: "idempotency-key", required: false })]);
    }
  });
});

describe("GET /v1/docs", () => {
  it("serves an interactive page whose scripts, styles and images all come from this origin, under a CSP of 'self' only", async () => {
    const response = await api("/v1/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    expect(roundTrips(response)).toBe(0);
    const html = await response.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(pageAssets(html)).toEqual([
      `${SWAGGER_UI}/favicon-32x32.png`,
      `${SWAGGER_UI}/swagger-ui.css`,
      `${SWAGGER_UI}/swagger-ui-bundle.js`,
      "/v1/docs/init.js",
    ]);
  });

  it("starts Swagger UI on this API's schema, without the third-party validator badge", async () => {
    const response = await api("/v1/docs/init.js");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const script = await response.text();
    expect(script).toContain('SwaggerUIBundle({"url":"/v1/openapi.json","dom_id":"#swagger-ui"');
    expect(script).toContain('"validatorUrl":null');
  });

  it("serves every file the page loads from the Worker's static assets, cached as immutable", async () => {
    const html = await (await api("/v1/docs")).text();
    const expected: Record<string, [RegExp, string]> = {
      "favicon-32x32.png": [/^image\/png/, "PNG"],
      "swagger-ui.css": [/^text\/css/, ".swagger-ui"],
      "swagger-ui-bundle.js": [/^(text|application)\/javascript/, "SwaggerUIBundle"],
    };
    for (const path of pageAssets(html).filter((p) => p.startsWith(SWAGGER_UI))) {
      const response = await api(path);
      expect(response.status, path).toBe(200);
      expect(roundTrips(response), path).toBe(0);
      const [type, marker] = expected[path.slice(SWAGGER_UI.length + 1)]!;
      expect(response.headers.get("content-type"), path).toMatch(type);
      expect(response.headers.get("cache-control"), path).toBe("public, max-age=31536000, immutable");
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      // Latin-1 reads any bytes, so the PNG's signature is as findable as the text files' markers.
      expect(new TextDecoder("latin1").decode(await response.arrayBuffer()), path).toContain(marker);
    }
  });

  it("ships Swagger UI's licence texts with the files", async () => {
    for (const file of ["LICENSE", "NOTICE", "swagger-ui-bundle.js.LICENSE.txt"]) {
      expect((await api(`${SWAGGER_UI}/${file}`)).status, file).toBe(200);
    }
  });

  it("answers 304 to a revalidation with the file's ETag", async () => {
    const first = await api(`${SWAGGER_UI}/swagger-ui.css`);
    await first.arrayBuffer();
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await api(`${SWAGGER_UI}/swagger-ui.css`, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
  });

  it("answers a Problem Details 404 for a file it does not have, or another release's files", async () => {
    await expectProblem(await api(`${SWAGGER_UI}/swagger-ui.js.map`), 404, "NOT_FOUND");
    await expectProblem(await api(`${SWAGGER_UI}/index.html`), 404, "NOT_FOUND");
    await expectProblem(await api("/v1/docs/assets/swagger-ui-5.0.0/swagger-ui.css"), 404, "NOT_FOUND");
  });
});

/** Paths of the page's icon, stylesheet and scripts, in document order. */
function pageAssets(html: string): string[] {
  return [...html.matchAll(/<(?:link|script)\b[^>]*\b(?:href|src)="([^"]+)"/g)].map((match) => match[1]!);
}
