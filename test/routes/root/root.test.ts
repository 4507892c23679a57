import { describe, expect, it } from "vitest";
import { api, ORIGIN, roundTrips } from "../../support/http";

const INDEX = {
  name: "relab research-data API",
  api_version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
  api_base_url: `${ORIGIN}/v1`,
  docs_url: `${ORIGIN}/v1/docs`,
  openapi_url: `${ORIGIN}/v1/openapi.json`,
  live_url: `${ORIGIN}/live`,
  health_url: `${ORIGIN}/health`,
};

describe("GET /", () => {
  it("answers a script or curl with JSON pointing to the API, its docs, its schema and the probes", async () => {
    for (const accept of [undefined, "*/*", "application/json"]) {
      const response = await api("/", { headers: accept ? { accept } : {} });
      expect(response.status, accept).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/json");
      // Mounted before the bootstrap check, like the probes, and reads nothing from D1.
      expect(roundTrips(response)).toBe(0);
      expect(response.headers.get("vary")).toMatch(/(^|, )Accept(,|$)/);
      expect(await response.json()).toEqual(INDEX);
    }
  });

  it("answers a browser with a page of the same links, under the API's no-load CSP", async () => {
    const accept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
    const response = await api("/", { headers: { accept } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("vary")).toMatch(/(^|, )Accept(,|$)/);
    expect(response.headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
    const html = await response.text();
    for (const link of [INDEX.docs_url, INDEX.openapi_url, INDEX.live_url, INDEX.health_url]) {
      expect(html).toContain(`href="${link}"`);
    }
    expect(html).not.toMatch(/<script|<style|style=/);
  });

  it("links only to pages that exist", async () => {
    const index = (await (await api("/")).json()) as Record<string, string>;
    for (const key of ["docs_url", "openapi_url", "live_url", "health_url"]) {
      expect((await api(index[key]!)).status, key).toBe(200);
    }
  });

  it("answers other methods with 405 and Allow", async () => {
    const response = await api("/", { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toContain("GET");
  });
});
