import { describe, expect, it } from "vitest";
import { forgetRecentReads } from "../../src/middleware/read-copies";
import { subjects } from "../../src/rate-limits/client";
import { bearer, patchMe, postJson, verifiedUser } from "../support/accounts";
import { api, apiWithVars, expectProblem, PRODUCTION_VARS, roundTrips } from "../support/http";
import { counterStore, freshIp, limitedApi, stallStore } from "../support/limits";
import { captureLogs } from "../support/logs";
import { awayFromStepEnd, bootstrapAdmin, enrolTotp } from "../support/mfa";

// The fast lane (src/fast-lane.ts, docs/architecture.md "The fast lane") answers /live and the
// cached reads (anonymous or signed in) without the framework. Its answers must be the app's, byte for byte and
// header for header; it must count every request it serves exactly once, and give a copy it finds
// out of date to the app without counting or reading it twice. `Authorization: Basic` (not a
// bearer token) keeps a request out of the lane while the app still reads it as anonymous, so
// the same request can be answered by both.

type Lane = "fast" | "app" | "handed over";
type Body = Record<string, unknown>;

const APP_ONLY = { authorization: "Basic bm90OmEtdG9rZW4=" };

function laneOf(response: Response): Lane {
  const match = /lane;desc="([a-z ]+)"/.exec(response.headers.get("server-timing") ?? "");
  if (!match) throw new Error(`no lane in Server-Timing: ${response.headers.get("server-timing")}`);
  return match[1] as Lane;
}

/** `RateLimit`'s remaining units of the general read bucket. */
function remaining(response: Response): number {
  const match = /"read-ip";r=(\d+)/.exec(response.headers.get("ratelimit") ?? "");
  if (!match) throw new Error(`no read-ip in RateLimit: ${response.headers.get("ratelimit")}`);
  return Number(match[1]);
}

/** The headers of a response, without those that differ between two answers by design (each read moves the local bookmark on). */
function comparable(response: Response): Record<string, string> {
  const differing = new Set(["server-timing", "ratelimit", "x-d1-bookmark"]);
  return Object.fromEntries([...response.headers].filter(([name]) => !differing.has(name)));
}

async function product(name: string) {
  const owner = await verifiedUser("laneowner");
  const created = await postJson("/v1/products", { name, brand: "Lane" }, bearer(owner.tokens.access_token));
  expect(created.status).toBe(201);
  const body = (await created.json()) as Body;
  return { owner, id: body.id as number, version: body.version as number };
}

/** Reads `path` as `client` (rate-limited when `limited`) until the fast lane answers: a copy stored, and a unit held. */
async function untilFast(path: string, client: string, extra: Record<string, string> = {}, limited = false): Promise<Response> {
  for (let tries = 0; tries < 8; tries++) {
    const init = { headers: { "cf-connecting-ip": client, ...extra } };
    const response = limited ? await limitedApi(client, path, init) : await api(path, init);
    expect(response.status, await response.clone().text()).toBeLessThan(400);
    if (laneOf(response) === "fast") return response;
    await response.arrayBuffer();
    await scheduler.wait(10);
  }
  throw new Error(`${path} never reached the fast lane`);
}

describe("the fast lane", () => {
  it("answers /live with the app's body and headers", async () => {
    const client = freshIp();
    // An allowed origin, and a bookmark the probe (which reads nothing) sends back as it came.
    const extra = { "x-request-id": "live-1", origin: "http://localhost:8081", "x-d1-bookmark": "00000000-0000000a-00000000-00" };
    const fast = await untilFast("/live", client, extra);
    const logs = captureLogs();
    let app: Response;
    try {
      await (await api("/live", { headers: { "cf-connecting-ip": client, ...extra } })).arrayBuffer();
      app = await api("/live", { headers: { "cf-connecting-ip": client, ...extra, ...APP_ONLY } });
    } finally {
      logs.restore();
    }
    // The same access log line but for the lane (and the time it took).
    const [fastLine, appLine] = logs.entries().map(({ ts, duration_ms, lane, ...rest }) => ({ ...rest, lane }));
    expect(fastLine).toMatchObject({ msg: "request", lane: "fast", path: "/live", status: 200, request_id: "live-1", client_ip: client });
    expect({ ...appLine, lane: "fast" }).toEqual(fastLine);
    expect(fast.headers.get("x-d1-bookmark")).toBe(extra["x-d1-bookmark"]);
    expect(fast.headers.get("access-control-allow-origin")).toBe(extra.origin);
    expect(laneOf(app)).toBe("app");
    expect(comparable(fast)).toEqual(comparable(app));
    expect(await fast.text()).toBe(await app.text());
    expect(roundTrips(fast)).toBe(0);
  });

  it("serves a cached read with the app's body and headers: 200, 304, an allowed origin, a bookmark sent back", async () => {
    const { id } = await product("Lane kettle");
    for (const path of [`/v1/products/${id}`, "/v1/products?brand[in]=Lane", `/v1/products/${id}/components/tree`]) {
      const client = freshIp();
      const fast = await untilFast(path, client, { "x-request-id": "read-1" });
      expect(fast.headers.get("x-cache"), path).toBe("hit");
      expect(roundTrips(fast), path).toBe(1);
      const app = await api(path, { headers: { "cf-connecting-ip": client, "x-request-id": "read-1", ...APP_ONLY } });
      expect(laneOf(app)).toBe("app");
      expect(comparable(fast), path).toEqual(comparable(app));
      expect(await fast.text(), path).toBe(await app.text());
      expect(fast.headers.get("x-d1-bookmark")).toMatch(/^[0-9a-f-]+$/);
      expect(app.headers.get("x-d1-bookmark")).toMatch(/^[0-9a-f-]+$/);

      // Lists carry no ETag: they answer 200 again.
      const etag = fast.headers.get("etag");
      const bookmark = fast.headers.get("x-d1-bookmark")!;
      const extra = {
        "if-none-match": etag ?? '"none"',
        origin: "http://localhost:8081",
        "x-d1-bookmark": bookmark,
        "x-request-id": "read-2",
      };
      const fast304 = await untilFast(path, client, extra);
      const app304 = await api(path, { headers: { "cf-connecting-ip": client, ...extra, ...APP_ONLY } });
      expect(fast304.status, path).toBe(etag ? 304 : 200);
      expect(app304.status, path).toBe(fast304.status);
      expect(fast304.headers.get("access-control-allow-origin")).toBe("http://localhost:8081");
      expect(comparable(fast304), path).toEqual(comparable(app304));
    }
  });

  it("counts every request it serves once, in the same count-down as the app", async () => {
    const { id } = await product("Lane counter");
    const client = freshIp();
    const lanes = new Set<Lane>();
    let last: number | null = null;
    for (let i = 0; i < 24; i++) {
      const response = await limitedApi(client, `/v1/products/${id}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      lanes.add(laneOf(response));
      if (last !== null) expect(remaining(response), `read ${i + 1}`).toBe(last - 1);
      last = remaining(response);
    }
    expect([...lanes].sort()).toEqual(["app", "fast"]);
  });

  it("hands a copy it finds out of date to the app, which reads afresh without counting or reading twice", async () => {
    const { owner, id, version } = await product("Lane before");
    const client = freshIp();
    const path = `/v1/products/${id}`;
    // Two fast answers in a row leave units held for the read after the change.
    await (await untilFast(path, client, {}, true)).arrayBuffer();
    const before = await untilFast(path, client, {}, true);
    const changed = await api(path, {
      method: "PATCH",
      headers: { ...bearer(owner.tokens.access_token), "content-type": "application/json", "if-match": `"${version}"` },
      body: JSON.stringify({ name: "Lane after" }),
    });
    expect(changed.status).toBe(200);

    // The units held after two fast answers (grants of 1, 2 and 4 units) bring this one to the lane.
    const after = await limitedApi(client, path);
    expect(laneOf(after)).toBe("handed over");
    expect(after.headers.get("x-cache")).toBe("miss");
    // The lane's validator and the read itself: what a stale read costs in the app alone.
    expect(roundTrips(after)).toBe(2);
    expect(((await after.json()) as Body).name).toMatch(/^Lane after/);
    // Counted once: by the lane, whose count the app reports.
    expect(remaining(after)).toBe(remaining(before) - 1);
    const next = await limitedApi(client, path);
    expect(remaining(next)).toBe(remaining(after) - 1);
  });

  it("leaves a copy dropped from memory while the request was counted to the app, which reads as it would (the Workers cache too)", async () => {
    const { id } = await product("Lane vanished");
    const path = `/v1/products/${id}`;
    await (await untilFast(path, freshIp())).arrayBuffer();
    const client = freshIp();
    // The counter store answers late: meanwhile the isolate's memory is cleared (other reads pushed the copy out, say).
    const { ended } = await stallStore(subjects.ip(client), 300);
    const pending = limitedApi(client, path);
    await scheduler.wait(100);
    forgetRecentReads();
    const handed = await pending;
    await ended;
    expect(laneOf(handed)).toBe("handed over");
    // The copy the Workers cache holds, validated: what the app alone would have answered.
    expect(handed.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(handed)).toBe(1);
    expect(remaining(handed)).toBe(299);
  });

  it("gives a request its rate limit refuses to the app, which answers the 429", async () => {
    const { id } = await product("Lane refused");
    const client = freshIp();
    const path = `/v1/products/${id}`;
    await (await untilFast(path, client, {}, true)).arrayBuffer();
    // Every other unit of the minute spent elsewhere (another isolate, say).
    const spec = { name: "read-ip", amount: 300, windowSeconds: 60, durable: false };
    await counterStore(subjects.ip(client)).consume([spec], 300);
    let refused = await limitedApi(client, path);
    // Units this isolate took ahead were counted before, and are served first.
    for (let tries = 0; refused.status === 200 && tries < 16; tries++) {
      expect(laneOf(refused)).toBe("fast");
      refused = await limitedApi(client, path);
    }
    expect(laneOf(refused)).toBe("handed over");
    await expectProblem(refused, 429, "RATE_LIMITED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit")).toMatch(/"read-ip";r=0;t=\d+/);
    expect(roundTrips(refused)).toBe(0);
  });

  it("serves a signed-in read the account's own copy, after its token check, as the app served it", async () => {
    const { owner, id } = await product("Lane private");
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const other = await verifiedUser("laneother");
    const path = `/v1/products/${id}`;
    const as = (token: string) => ({ "cf-connecting-ip": freshIp(), "x-request-id": "signed-1", ...bearer(token) });
    const first = await api(path, { headers: as(owner.tokens.access_token) });
    expect([laneOf(first), first.headers.get("x-cache")]).toEqual(["app", "miss"]);
    const fast = await untilFast(path, freshIp(), { ...bearer(owner.tokens.access_token), "x-request-id": "signed-1" });
    expect(fast.headers.get("x-cache")).toBe("hit");
    // The token check and the validator in one batch.
    expect(roundTrips(fast)).toBe(1);
    const { "x-cache": hit, ...fastHeaders } = comparable(fast);
    const { "x-cache": miss, ...appHeaders } = comparable(first);
    expect(fastHeaders).toEqual(appHeaders);
    const body = await fast.text();
    expect(body).toBe(await first.text());
    expect((JSON.parse(body) as Body).owner_username).toBe(owner.username);

    // Another account, and anonymous readers, never get the owner's copy.
    const theirs = await api(path, { headers: as(other.tokens.access_token) });
    expect([laneOf(theirs), theirs.headers.get("x-cache")]).toEqual(["app", "miss"]);
    expect(((await theirs.json()) as Body).owner_username).toBeNull();
    const anonymous = await untilFast(path, freshIp());
    expect(((await anonymous.json()) as Body).owner_username).toBeNull();
  });

  it("hands a read with a revoked token to the app, which reads it as anonymous without checking the token again", async () => {
    const { owner, id } = await product("Lane revoked");
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const path = `/v1/products/${id}`;
    await (await untilFast(path, freshIp(), bearer(owner.tokens.access_token))).arrayBuffer();
    const revoked = await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(owner.tokens.access_token) });
    expect(revoked.status).toBe(204);
    const after = await api(path, { headers: { "cf-connecting-ip": freshIp(), ...bearer(owner.tokens.access_token) } });
    expect(laneOf(after)).toBe("handed over");
    expect(after.headers.get("x-cache")).not.toBe("hit");
    // The lane's batch (the check and the validator), then the read as anonymous: what the app alone costs.
    expect(roundTrips(after)).toBe(2);
    expect(((await after.json()) as Body).owner_username).toBeNull();
  });

  it("counts a signed-in read in its account's bucket, once, in the same count-down as the app", async () => {
    const { owner, id } = await product("Lane account counter");
    const lanes = new Set<Lane>();
    let last: number | null = null;
    for (let i = 0; i < 20; i++) {
      const response = await limitedApi(freshIp(), `/v1/products/${id}`, { headers: bearer(owner.tokens.access_token) });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      lanes.add(laneOf(response));
      const left = Number(/"read-user";r=(\d+)/.exec(response.headers.get("ratelimit") ?? "")?.[1]);
      if (last !== null) expect(left, `read ${i + 1}`).toBe(last - 1);
      last = left;
    }
    expect([...lanes].sort()).toEqual(["app", "fast"]);
  });

  it("serves a superuser's copy only to a viewer with the same powers: TOTP off, then on again, from either tier", async () => {
    const owner = await verifiedUser("lanepowers");
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const created = await postJson("/v1/products", { name: "Lane powers", brand: "Lane" }, bearer(owner.tokens.access_token));
    const path = `/v1/products/${((await created.json()) as Body).id}`;
    const admin = await bootstrapAdmin();
    const read = async (token: string) => {
      const response = await api(path, { headers: { "cf-connecting-ip": freshIp(), ...bearer(token) } });
      expect(response.status).toBe(200);
      return { lane: laneOf(response), cache: response.headers.get("x-cache"), owner: ((await response.json()) as Body).owner_username };
    };
    // With TOTP a superuser sees private owners, from the copy kept for them.
    expect(await read(admin.tokens.access_token)).toMatchObject({ owner: owner.username });
    expect(await read(admin.tokens.access_token)).toMatchObject({ lane: "fast", cache: "hit", owner: owner.username });
    await awayFromStepEnd();
    const disabled = await postJson(
      "/v1/auth/mfa/totp/disable",
      { code: admin.authenticator.next(), current_password: admin.password },
      bearer(admin.tokens.access_token),
    );
    expect(disabled.status).toBe(204);
    // Without, the same token is an ordinary account's: the Workers cache's copy is not for it.
    forgetRecentReads();
    expect(await read(admin.tokens.access_token)).toMatchObject({ lane: "app", cache: "miss", owner: null });
    expect(await read(admin.tokens.access_token)).toMatchObject({ lane: "fast", cache: "hit", owner: null });
    // With TOTP again, the lane does not serve the ordinary account's copy from memory.
    const again = await enrolTotp(admin.tokens.access_token, admin.password);
    expect(await read(again.tokens.access_token)).toMatchObject({ lane: "handed over", cache: "miss", owner: owner.username });
  });

  it("leaves credentials that are no bearer token and encoded paths to the app", async () => {
    const { id } = await product("Lane others");
    const client = freshIp();
    await (await untilFast(`/v1/products/${id}`, client)).arrayBuffer();
    const basic = await api(`/v1/products/${id}`, { headers: { "cf-connecting-ip": client, ...APP_ONLY } });
    expect(laneOf(basic)).toBe("app");
    // The same record, its first digit percent-encoded.
    const digits = String(id);
    const encoded = await api(`/v1/products/%3${digits[0]}${digits.slice(1)}`, { headers: { "cf-connecting-ip": client } });
    expect(encoded.status).toBe(200);
    expect(laneOf(encoded)).toBe("app");
  });

  it("leaves a configuration the app refuses to the app", async () => {
    await (await untilFast("/live", freshIp())).arrayBuffer();
    const refused: Record<string, string>[] = [{ ENVIRONMENT: "" }, { PLUGIN_RPI_CAM: "perhaps" }];
    for (const vars of refused) await expectProblem(await apiWithVars(vars, "/live"), 500, "INTERNAL_ERROR");
  });

  it("sends production's headers in production", async () => {
    const { id } = await product("Lane production");
    const path = `/v1/products/${id}`;
    await (await untilFast(path, freshIp())).arrayBuffer();
    const response = await apiWithVars(PRODUCTION_VARS, path, { headers: { "cf-connecting-ip": freshIp() } });
    expect(response.status).toBe(200);
    expect(response.headers.get("strict-transport-security")).toBe("max-age=63072000; includeSubDomains");
    expect(response.headers.get("server-timing")).toBeNull();
  });
});
