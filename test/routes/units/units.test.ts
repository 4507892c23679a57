import { describe, expect, it } from "vitest";
import { api, roundTrips } from "../../support/http";

describe("GET /v1/units", () => {
  it("lists the unit codes from the database in display order, in one round trip", async () => {
    const response = await api("/v1/units");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(["kg", "g", "m", "cm"]);
    expect(roundTrips(response)).toBe(1);
  });

  it("is public and cacheable, and a repeat read comes from the KV cache without D1", async () => {
    const response = await api("/v1/units");
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
    // The cache is written after the response; wait for it to land.
    let again = await api("/v1/units");
    for (let i = 0; i < 20 && again.headers.get("x-cache") !== "hit"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      again = await api("/v1/units");
    }
    expect(again.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(again)).toBe(0);
    expect(again.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(await again.json()).toEqual(["kg", "g", "m", "cm"]);
  });
});
