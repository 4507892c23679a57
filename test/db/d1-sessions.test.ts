import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../support/accounts";
import { api, roundTrips } from "../support/http";

const BOOKMARK = /^[0-9a-f]{1,16}(?:-[0-9a-f]{1,64}){1,7}$/i;

describe("D1 sessions and bookmarks", () => {
  it("reports the session's bookmark; a client sending it back reads its own write", async () => {
    const user = await verifiedUser("bookmark");
    const created = await postJson("/v1/products", { name: "Bookmarked kettle" }, bearer(user.tokens.access_token));
    expect(created.status).toBe(201);
    const written = created.headers.get("x-d1-bookmark");
    expect(written).toMatch(BOOKMARK);
    const id = ((await created.json()) as { id: number }).id;

    const read = await api(`/v1/products/${id}`, { headers: { "X-D1-Bookmark": written! } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { name: string }).name).toBe("Bookmarked kettle");
    // The read's session started at the write's bookmark: its own is at least as recent.
    const after = read.headers.get("x-d1-bookmark")!;
    expect(after >= written!).toBe(true);
  });

  it("ignores a bookmark it cannot read, and reports the one it was sent when the request read nothing", async () => {
    for (const bad of ["not a bookmark", "00000000-00000000-zz", "x".repeat(300)]) {
      const response = await api("/v1/products?size=1", { headers: { "X-D1-Bookmark": bad } });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
    }
    const probe = await api("/live", { headers: { "X-D1-Bookmark": "0000000a-00000001-00004f8b-abcdef" } });
    expect(probe.status).toBe(200);
    expect(probe.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
  });

  it("lets browser apps send and read the header (CORS)", async () => {
    const preflight = await api("/v1/products", {
      method: "OPTIONS",
      headers: { Origin: env.APP_ORIGIN, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-d1-bookmark" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toContain("X-D1-Bookmark");
    const read = await api("/v1/products?size=1", { headers: { Origin: env.APP_ORIGIN } });
    expect(read.headers.get("access-control-expose-headers")).toContain("X-D1-Bookmark");
  });

  it("counts a round trip of a session like any other", async () => {
    const read = await api("/v1/products?size=1");
    expect(roundTrips(read)).toBe(1);
  });
});
