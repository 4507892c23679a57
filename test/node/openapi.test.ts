import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { openApiDocument } from "../../src/lib/openapi";

// Runs in Node: the validator compiles JSON Schemas to code, which workerd does not allow.
// The document is the one GET /v1/openapi.json serves (same function, same app).
describe("the OpenAPI document", () => {
  it("validates against the official OpenAPI 3.1 schema", async () => {
    const document = openApiDocument(app, "https://api.relab.example");
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("documents the 429 of the rate limiter, with its headers, on every /v1 operation", () => {
    const document = openApiDocument(app, "https://api.relab.example");
    const operations = Object.entries(document.paths ?? {})
      .filter(([path]) => path.startsWith("/v1/"))
      .flatMap(([path, item]) => Object.entries(item ?? {}).map(([method, operation]) => ({ path, method, operation })));
    expect(operations.length).toBeGreaterThan(10);
    for (const { path, method, operation } of operations) {
      const refused = (operation as { responses: Record<string, { headers?: Record<string, unknown> }> }).responses["429"];
      expect(refused, `${method} ${path}`).toBeDefined();
      expect(Object.keys(refused!.headers ?? {}).sort()).toEqual(["RateLimit", "RateLimit-Policy", "Retry-After", "X-D1-Bookmark"]);
    }
  });
});
