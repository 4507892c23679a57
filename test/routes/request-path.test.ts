import { describe, expect, it } from "vitest";
import { CACHE_NAME, cacheKey, forgetRecentReads } from "../../src/middleware/read-copies";
import { subjects } from "../../src/rate-limits/client";
import { bearer, patchMe, postJson, verifiedUser } from "../support/accounts";
import { api, apiWithVars, expectProblem, ORIGIN, PRODUCTION_VARS, roundTrips } from "../support/http";
import { counterStore, freshIp, limitedApi } from "../support/limits";
import { captureLogs } from "../support/logs";
import { awayFromStepEnd, bootstrapAdmin, enrolTotp } from "../support/mfa";

// One request path (docs/architecture.md "One request path"): `/live` and the cached reads go
// through the same pipeline as every other request. What the fast lane this replaces promised is
// held here: a copy is served with exactly the headers and body of the answer that stored it (but
// `X-Cache`), with an allowed origin, 304 and a bookmark sent back; every request is counted once;
// a copy found out of date, or a revoked token, is read afresh in two round trips; a superuser's
// copy is served only to a viewer with the same powers. (Moved from test/routes/fast-lane.test.ts.)

type Body = Record<string, unknown>;

/** The headers of a response, without those that differ between two answers by design (each read moves the local bookmark on; timing and the cache's own word). */
function comparable(response: Response): Record<string, string> {
  const differing = new Set(["server-timing", "ratelimit", "x-d1-bookmark", "x-cache"]);
  return Object.fromEntries([...response.headers].filter(([name]) => !differing.has(name)));
}

/** `RateLimit`'s remaining units of the general read bucket. */
function remaining(response: Response, bucket = "read-ip"): number {
  const match = new RegExp(`"${bucket}";r=(\\d+)`).exec(response.headers.get("ratelimit") ?? "");
  if (!match) throw new Error(`no ${bucket} in RateLimit: ${response.headers.get("ratelimit")}`);
  return Number(match[1]);
}

async function product(name: string) {
  const owner = await verifiedUser("pathowner");
  const created = await postJson("/v1/products", { name, brand: "Lane" }, bearer(owner.tokens.access_token));
  expect(created.status).toBe(201);
  const body = (await created.json()) as Body;
  return { owner, id: body.id as number, version: body.version as number };
}

/** Reads `path` until it is served from a copy (stored after the answer that computed it was sent). */
async function untilHit(path: string, headers: Record<string, string> = {}): Promise<Response> {
  for (let tries = 0; tries < 8; tries++) {
    const response = await api(path, { headers: { "cf-connecting-ip": freshIp(), ...headers } });
    expect(response.status, await response.clone().text()).toBeLessThan(400);
    if (response.headers.get("x-cache") === "hit") return response;
    await response.arrayBuffer();
    await scheduler.wait(10);
  }
  throw new Error(`${path} was never served from a copy`);
}

describe("one request path", () => {
  it("answers /live with its headers and one access log line", async () => {
    const client = freshIp();
    const extra = { "x-request-id": "live-1", origin: "http://localhost:8081", "x-d1-bookmark": "00000000-0000000a-00000000-00" };
    const logs = captureLogs();
    let live: Response;
    try {
      live = await api("/live", { headers: { "cf-connecting-ip": client, ...extra } });
    } finally {
      logs.restore();
    }
    expect(live.status).toBe(200);
    expect(await live.text()).toBe('{"status":"alive"}');
    // Every header of the answer, by name: nothing more, nothing less.
    expect(comparable(live)).toEqual({
      "access-control-allow-credentials": "true",
      "access-control-allow-origin": extra.origin,
      "access-control-expose-headers":
        "X-Request-ID, ETag, Location, Retry-After, RateLimit, RateLimit-Policy, Content-Disposition, Idempotent-Replayed, X-D1-Bookmark",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      "content-type": "application/json",
      "cross-origin-opener-policy": "same-origin",
      "referrer-policy": "no-referrer",
      vary: "Origin",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      "x-request-id": "live-1",
    });
    // The probe reads nothing: the bookmark goes back as it came.
    expect(live.headers.get("x-d1-bookmark")).toBe(extra["x-d1-bookmark"]);
    expect(roundTrips(live)).toBe(0);
    const lines = logs.entries().filter((entry) => entry.msg === "request");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ path: "/live", status: 200, request_id: "live-1", client_ip: client, d1_round_trips: 0 });
  });

  it("serves a cached read with the body and headers of the answer that stored it: 200, 304, an allowed origin, a bookmark sent back", async () => {
    const { id } = await product("Path kettle");
    for (const path of [`/v1/products/${id}`, "/v1/products?brand[in]=Lane", `/v1/products/${id}/components/tree`]) {
      forgetRecentReads();
      const computed = await api(path, { headers: { "cf-connecting-ip": freshIp(), "x-request-id": "read-1" } });
      expect(computed.headers.get("x-cache"), path).not.toBe("hit");
      const body = await computed.text();
      const hit = await untilHit(path, { "x-request-id": "read-1" });
      expect(roundTrips(hit), path).toBe(1);
      expect(comparable(hit), path).toEqual(comparable(computed));
      expect(await hit.text(), path).toBe(body);
      expect(hit.headers.get("x-d1-bookmark")).toMatch(/^[0-9a-f-]+$/);

      // Lists carry no ETag: they answer 200 again.
      const etag = hit.headers.get("etag");
      const extra = {
        "if-none-match": etag ?? '"none"',
        origin: "http://localhost:8081",
        "x-d1-bookmark": hit.headers.get("x-d1-bookmark")!,
        "x-request-id": "read-2",
      };
      const again = await untilHit(path, extra);
      expect(again.status, path).toBe(etag ? 304 : 200);
      expect(again.headers.get("access-control-allow-origin")).toBe("http://localhost:8081");
      expect(again.headers.get("access-control-allow-credentials")).toBe("true");
      expect(again.headers.get("x-request-id")).toBe("read-2");
      expect(again.headers.get("cache-control")).toBe("no-store");
      expect(roundTrips(again), path).toBe(1);
    }
  });

  it("counts every read once, cached or not, in one count-down", async () => {
    const { id } = await product("Path counter");
    const client = freshIp();
    const served = new Set<string | null>();
    let last: number | null = null;
    for (let i = 0; i < 24; i++) {
      const response = await limitedApi(client, `/v1/products/${id}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      served.add(response.headers.get("x-cache"));
      if (last !== null) expect(remaining(response), `read ${i + 1}`).toBe(last - 1);
      last = remaining(response);
    }
    expect([...served].sort()).toEqual(["hit", "miss"]);
  });

  it("reads a copy it finds out of date afresh, in two round trips, counted once", async () => {
    const { owner, id, version } = await product("Path before");
    const client = freshIp();
    const path = `/v1/products/${id}`;
    await (await limitedApi(client, path)).arrayBuffer();
    const before = await untilHit(path);
    await before.arrayBuffer();
    const counted = await limitedApi(client, path);
    expect(counted.headers.get("x-cache")).toBe("hit");
    const changed = await api(path, {
      method: "PATCH",
      headers: { ...bearer(owner.tokens.access_token), "content-type": "application/json", "if-match": `"${version}"` },
      body: JSON.stringify({ name: "Path after" }),
    });
    expect(changed.status).toBe(200);
    const after = await limitedApi(client, path);
    expect(after.headers.get("x-cache")).toBe("miss");
    // The validator, then the read itself.
    expect(roundTrips(after)).toBe(2);
    expect(((await after.json()) as Body).name).toMatch(/^Path after/);
    expect(remaining(after)).toBe(remaining(counted) - 1);
  });

  it("reads a copy of a generation it has seen pass afresh in one round trip, without validating it first", async () => {
    const { owner, id, version } = await product("Path lists");
    const lists = ["/v1/products?brand[in]=Lane&size=5", "/v1/products?brand[in]=Lane&size=6"] as const;
    for (const path of lists) {
      await (await api(path)).arrayBuffer();
      await (await untilHit(path)).arrayBuffer();
    }
    // A write renews the catalogue's generation: every list copy is out of date.
    const changed = await api(`/v1/products/${id}`, {
      method: "PATCH",
      headers: { ...bearer(owner.tokens.access_token), "content-type": "application/json", "if-match": `"${version}"` },
      body: JSON.stringify({ name: "Path lists after" }),
    });
    expect(changed.status).toBe(200);
    // The first finds its copy out of date (the validator, then the read); the second's copy is of
    // the generation the first saw pass, so it is read at once, the validator in its batch.
    const first = await api(lists[0]);
    expect([first.headers.get("x-cache"), roundTrips(first)]).toEqual(["miss", 2]);
    const second = await api(lists[1]);
    expect([second.headers.get("x-cache"), roundTrips(second)]).toEqual(["miss", 1]);
    expect(((await second.json()) as { items: Body[] }).items.some((item) => item.name === "Path lists after")).toBe(true);
    // And its new copy is served again.
    expect(roundTrips(await untilHit(lists[1]))).toBe(1);
  });

  it("puts a copy into the Workers cache once it is served again from memory, not when it is computed", async () => {
    const { id } = await product("Path shared");
    const path = `/v1/products/${id}`;
    const shared = await caches.open(CACHE_NAME);
    const key = cacheKey(new URL(path, ORIGIN), "anonymous");
    await (await api(path)).arrayBuffer();
    await scheduler.wait(20);
    // Kept in memory only: a write before its next read would leave nothing to write.
    expect(await shared.match(key)).toBeUndefined();
    await (await untilHit(path)).arrayBuffer();
    let entry: Response | undefined;
    for (let tries = 0; !entry && tries < 10; tries++) {
      await scheduler.wait(20);
      entry = await shared.match(key);
    }
    expect(entry?.headers.get("x-read-generation")).toMatch(/^-?\d+\.-?\d+\.-?\d+$/);
    await entry?.arrayBuffer();
  });

  it("answers a read its rate limit refuses with 429, reading nothing", async () => {
    const { id } = await product("Path refused");
    const client = freshIp();
    const path = `/v1/products/${id}`;
    await (await limitedApi(client, path)).arrayBuffer();
    await (await untilHit(path)).arrayBuffer();
    // Every other unit of the minute spent elsewhere (another isolate, say).
    const spec = { name: "read-ip", amount: 300, windowSeconds: 60, durable: false };
    await counterStore(subjects.ip(client)).consume([spec], 300);
    let refused = await limitedApi(client, path);
    // Units this isolate took ahead were counted before, and are served first.
    for (let tries = 0; refused.status === 200 && tries < 16; tries++) refused = await limitedApi(client, path);
    await expectProblem(refused, 429, "RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit")).toMatch(/"read-ip";r=0;t=\d+/);
    expect(roundTrips(refused)).toBe(0);
  });

  it("serves a signed-in read the account's own copy, after its token check, in one round trip", async () => {
    const { owner, id } = await product("Path private");
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const other = await verifiedUser("pathother");
    const path = `/v1/products/${id}`;
    const as = (token: string) => ({ "cf-connecting-ip": freshIp(), "x-request-id": "signed-1", ...bearer(token) });
    const first = await api(path, { headers: as(owner.tokens.access_token) });
    expect(first.headers.get("x-cache")).toBe("miss");
    const hit = await untilHit(path, { ...bearer(owner.tokens.access_token), "x-request-id": "signed-1" });
    // The token check and the validator in one batch.
    expect(roundTrips(hit)).toBe(1);
    expect(comparable(hit)).toEqual(comparable(first));
    const body = await hit.text();
    expect(body).toBe(await first.text());
    expect((JSON.parse(body) as Body).owner_username).toBe(owner.username);

    // Another account, and anonymous readers, never get the owner's copy.
    const theirs = await api(path, { headers: as(other.tokens.access_token) });
    expect(theirs.headers.get("x-cache")).toBe("miss");
    expect(((await theirs.json()) as Body).owner_username).toBeNull();
    const anonymous = await untilHit(path);
    expect(((await anonymous.json()) as Body).owner_username).toBeNull();
  });

  it("reads a read with a revoked token as anonymous, checking the token once", async () => {
    const { owner, id } = await product("Path revoked");
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const path = `/v1/products/${id}`;
    await (await untilHit(path, bearer(owner.tokens.access_token))).arrayBuffer();
    const revoked = await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(owner.tokens.access_token) });
    expect(revoked.status).toBe(204);
    const after = await api(path, { headers: { "cf-connecting-ip": freshIp(), ...bearer(owner.tokens.access_token) } });
    expect(after.headers.get("x-cache")).not.toBe("hit");
    // The check with the validator, then the read as anonymous.
    expect(roundTrips(after)).toBe(2);
    expect(((await after.json()) as Body).owner_username).toBeNull();
  });

  it("counts a signed-in read in its account's bucket, once, cached or not", async () => {
    const { owner, id } = await product("Path account counter");
    const served = new Set<string | null>();
    let last: number | null = null;
    for (let i = 0; i < 20; i++) {
      const response = await limitedApi(freshIp(), `/v1/products/${id}`, { headers: bearer(owner.tokens.access_token) });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      served.add(response.headers.get("x-cache"));
      if (last !== null) expect(remaining(response, "read-user"), `read ${i + 1}`).toBe(last - 1);
      last = remaining(response, "read-user");
    }
    expect([...served].sort()).toEqual(["hit", "miss"]);
  });

  it("serves a superuser's copy only to a viewer with the same powers: TOTP off, then on again, from either tier", async () => {
    const owner = await verifiedUser("pathpowers");
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const created = await postJson("/v1/products", { name: "Path powers", brand: "Lane" }, bearer(owner.tokens.access_token));
    const path = `/v1/products/${((await created.json()) as Body).id}`;
    const admin = await bootstrapAdmin();
    const read = async (token: string) => {
      const response = await api(path, { headers: { "cf-connecting-ip": freshIp(), ...bearer(token) } });
      expect(response.status).toBe(200);
      return { cache: response.headers.get("x-cache"), owner: ((await response.json()) as Body).owner_username };
    };
    // With TOTP a superuser sees private owners, from the copy kept for them.
    expect(await read(admin.tokens.access_token)).toMatchObject({ owner: owner.username });
    expect(await read(admin.tokens.access_token)).toMatchObject({ cache: "hit", owner: owner.username });
    await awayFromStepEnd();
    const disabled = await postJson(
      "/v1/auth/mfa/totp/disable",
      { code: admin.authenticator.next(), current_password: admin.password },
      bearer(admin.tokens.access_token),
    );
    expect(disabled.status).toBe(204);
    // Without, the same token is an ordinary account's: the Workers cache's copy is not for it.
    forgetRecentReads();
    expect(await read(admin.tokens.access_token)).toMatchObject({ cache: "miss", owner: null });
    expect(await read(admin.tokens.access_token)).toMatchObject({ cache: "hit", owner: null });
    // With TOTP again, the ordinary account's copy in memory is not served.
    const again = await enrolTotp(admin.tokens.access_token, admin.password);
    expect(await read(again.tokens.access_token)).toMatchObject({ cache: "miss", owner: owner.username });
  });

  it("reads credentials that are no bearer token, and encoded paths, as the same read", async () => {
    const { id } = await product("Path others");
    await (await untilHit(`/v1/products/${id}`)).arrayBuffer();
    const basic = await api(`/v1/products/${id}`, { headers: { "cf-connecting-ip": freshIp(), authorization: "Basic bm90OmEtdG9rZW4=" } });
    expect(basic.status).toBe(200);
    expect(((await basic.json()) as Body).id).toBe(id);
    // The same record, its first digit percent-encoded.
    const digits = String(id);
    const encoded = await api(`/v1/products/%3${digits[0]}${digits.slice(1)}`, { headers: { "cf-connecting-ip": freshIp() } });
    expect(encoded.status).toBe(200);
    expect(((await encoded.json()) as Body).id).toBe(id);
  });

  it("answers a configuration it refuses with 500, /live included", async () => {
    await (await api("/live")).arrayBuffer();
    const refused: Record<string, string>[] = [{ ENVIRONMENT: "" }, { PLUGIN_RPI_CAM: "perhaps" }];
    for (const vars of refused) await expectProblem(await apiWithVars(vars, "/live"), 500, "INTERNAL_ERROR");
  });

  it("sends production's headers in production, and no X-Cache or Server-Timing", async () => {
    const { id } = await product("Path production");
    const path = `/v1/products/${id}`;
    for (let i = 0; i < 3; i++) {
      const response = await apiWithVars(PRODUCTION_VARS, path, { headers: { "cf-connecting-ip": freshIp() } });
      expect(response.status).toBe(200);
      expect(response.headers.get("strict-transport-security")).toBe("max-age=63072000; includeSubDomains");
      expect(response.headers.get("server-timing")).toBeNull();
      expect(response.headers.get("x-cache")).toBeNull();
      await response.arrayBuffer();
    }
  });

  it("refuses unknown query parameters with 422 on every cached read, so none makes a copy of its own", async () => {
    const { id } = await product("Path junk");
    const junk = `junk=${"x".repeat(64)}`;
    for (const path of [
      `/v1/products/${id}?${junk}`,
      `/v1/components/${id}?${junk}`,
      `/v1/products/${id}/components?${junk}`,
      `/v1/products/${id}/components/tree?${junk}`,
      `/v1/components/${id}/components?${junk}`,
      `/v1/components/${id}/components/tree?${junk}`,
      `/v1/products?${junk}`,
      `/v1/products/facets?fields=brand&${junk}`,
      `/v1/products/suggestions/brands?search=L&${junk}`,
    ]) {
      for (let i = 0; i < 2; i++) await expectProblem(await api(path), 422, "VALIDATION_FAILED");
    }
  });
});
