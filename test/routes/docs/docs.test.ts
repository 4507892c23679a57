import { describe, expect, it } from "vitest";
import { api, ORIGIN } from "../../support/http";

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

describe("GET /v1/docs", () => {
  it("serves an interactive page for the schema, with a nonce-based CSP and pinned, integrity-checked assets", async () => {
    const response = await api("/v1/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = response.headers.get("content-security-policy")!;
    const nonce = /'nonce-([A-Za-z0-9+/]+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    const html = await response.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain('"/v1/openapi.json"');
    expect(html.match(/integrity="sha384-[A-Za-z0-9+/=]{64}"/g)).toHaveLength(2);
    expect(html).toMatch(/swagger-ui-dist@\d+\.\d+\.\d+\//);
  });

  it("uses a new nonce for each request", async () => {
    const [a, b] = await Promise.all([api("/v1/docs"), api("/v1/docs")]);
    expect(a.headers.get("content-security-policy")).not.toBe(b.headers.get("content-security-policy"));
  });
});
