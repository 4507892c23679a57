import { describe, expect, it } from "vitest";
import { API_CSP } from "../../src/middleware/security-headers";
import { api, apiWithVars, PRODUCTION_VARS } from "../support/http";

describe("security headers", () => {
  it.each([
    ["a JSON success", "/v1/units", 200],
    ["a probe", "/live", 200],
    ["an error", "/v1/missing", 404],
  ])("are on %s", async (_, path, status) => {
    const response = await api(path);
    expect(response.status).toBe(status);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-security-policy")).toBe(API_CSP);
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("cross-origin-opener-policy")).toBe("same-origin");
  });

  it("are the documented ones only (none of the other defaults of hono/secure-headers)", async () => {
    const response = await apiWithVars(PRODUCTION_VARS, "/v1/units");
    for (const name of [
      "cross-origin-embedder-policy",
      "cross-origin-resource-policy",
      "origin-agent-cluster",
      "x-dns-prefetch-control",
      "x-download-options",
      "x-permitted-cross-domain-policies",
      "x-xss-protection",
    ]) {
      expect(response.headers.get(name), name).toBeNull();
    }
  });

  it("HSTS is sent in production only", async () => {
    expect((await api("/live")).headers.get("strict-transport-security")).toBeNull();
    const production = await apiWithVars(PRODUCTION_VARS, "/live");
    expect(production.headers.get("strict-transport-security")).toBe("max-age=63072000; includeSubDomains");
  });
});

describe("Cache-Control", () => {
  it("is no-store on errors", async () => {
    expect((await api("/v1/missing")).headers.get("cache-control")).toBe("no-store");
    expect((await api("/v1/units", { method: "POST" })).headers.get("cache-control")).toBe("no-store");
  });

  it("is no-store on anything not marked cacheable", async () => {
    expect((await api("/live")).headers.get("cache-control")).toBe("no-store");
    expect((await api("/health")).headers.get("cache-control")).toBe("no-store");
  });

  it("lets public reference data be cached", async () => {
    expect((await api("/v1/units")).headers.get("cache-control")).toBe("public, max-age=3600");
  });
});
