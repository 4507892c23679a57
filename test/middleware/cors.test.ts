import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, expectProblem, ORIGIN } from "../support/http";

const configured = [env.APP_ORIGIN, env.SITE_ORIGIN, env.DOCS_ORIGIN];

describe("CORS", () => {
  it.each([...configured, ORIGIN])("allows %s with credentials", async (origin) => {
    const response = await api("/v1/units", { headers: { Origin: origin } });
    expect(response.headers.get("access-control-allow-origin")).toBe(origin);
    expect(response.headers.get("access-control-allow-credentials")).toBe("true");
    expect(response.headers.get("access-control-expose-headers")).toContain("X-Request-ID");
    expect(response.headers.get("vary")).toContain("Origin");
  });

  it("adds CORS headers to error responses too, so the app can read them", async () => {
    const response = await api("/v1/missing", { headers: { Origin: env.APP_ORIGIN } });
    expect(response.status).toBe(404);
    expect(response.headers.get("access-control-allow-origin")).toBe(env.APP_ORIGIN);
    expect(response.headers.get("access-control-expose-headers")).toContain("X-Request-ID");
  });

  it("sends no CORS headers to another origin", async () => {
    const response = await api("/v1/units", { headers: { Origin: "https://evil.example" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
    expect(response.headers.get("vary")).toContain("Origin");
  });

  it("treats a look-alike of a configured origin as foreign", async () => {
    const lookAlike = env.APP_ORIGIN.replace("localhost", "localhost.evil.example");
    const response = await api("/v1/units", { headers: { Origin: lookAlike } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers a preflight from an allowed origin", async () => {
    const response = await api("/v1/units", {
      method: "OPTIONS",
      headers: {
        Origin: env.APP_ORIGIN,
        "Access-Control-Request-Method": "PATCH",
        "Access-Control-Request-Headers": "if-match, content-type",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(env.APP_ORIGIN);
    expect(response.headers.get("access-control-allow-credentials")).toBe("true");
    expect(response.headers.get("access-control-allow-methods")).toContain("PATCH");
    expect(response.headers.get("access-control-allow-headers")).toContain("If-Match");
    expect(response.headers.get("access-control-max-age")).toBe("600");
  });

  it("refuses a preflight from another origin", async () => {
    const response = await api("/v1/units", {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    await expectProblem(response, 403, "CORS_ORIGIN_NOT_ALLOWED");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(response.headers.get("vary")).toContain("Origin");
  });

  it("a plain OPTIONS (no preflight headers) is just a method the route lacks", async () => {
    const response = await api("/v1/units", { method: "OPTIONS" });
    await expectProblem(response, 405, "METHOD_NOT_ALLOWED");
  });
});
