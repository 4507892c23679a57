import { describe, expect, it } from "vitest";
import { api, roundTrips } from "../../support/http";
import { readUntilHit } from "../../support/reference";

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
    const again = await readUntilHit("/v1/units");
    expect(roundTrips(again)).toBe(0);
    expect(again.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(await again.json()).toEqual(["kg", "g", "m", "cm"]);
  });
});
