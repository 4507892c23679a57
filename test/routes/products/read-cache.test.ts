import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { CACHE_NAME, cacheKey, forgetRecentReads } from "../../../src/middleware/read-copies";
import { bearer, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, ORIGIN, roundTrips } from "../../support/http";
import { pendingWithoutJob, scan } from "../../support/media";
import { bootstrapAdmin } from "../../support/mfa";

const notes = (text: string) => ({ bytes: new TextEncoder().encode(text), name: "notes.txt", type: "text/plain" });

// Validated caching of public reads (docs/storage.md "Cached reads"): every viewer class gets its
// own copy, a copy is served only while the generations its read saw are current, and every kind
// of write that changes what a read shows makes the next read of every class compute it afresh.

type Body = Record<string, any>;

/** Who reads: null is anonymous; otherwise an access token. */
type Viewer = { name: string; token: string | null };

let steel: number;

beforeAll(async () => {
  await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Steel')").run();
  steel = (await env.DB.prepare("SELECT id FROM materials WHERE name = 'Steel'").first<{ id: number }>())!.id;
});

const headersOf = (viewer: Viewer, extra: Record<string, string> = {}) => ({ ...(viewer.token ? bearer(viewer.token) : {}), ...extra });

async function read(path: string, viewer: Viewer, extra: Record<string, string> = {}): Promise<Response> {
  const response = await api(path, { headers: headersOf(viewer, extra) });
  expect(response.status, `${viewer.name} ${path}: ${await response.clone().text()}`).toBe(200);
  return response;
}

/** Reads `path` again until the copy a read before stored is served (it is stored after the answer is sent, in waitUntil). */
async function readUntilHit(path: string, viewer: Viewer): Promise<Response> {
  let again = await read(path, viewer);
  for (let tries = 0; again.headers.get("x-cache") !== "hit" && tries < 5; tries++) {
    await scheduler.wait(20);
    again = await read(path, viewer);
  }
  expect(again.headers.get("x-cache"), `${viewer.name} ${path}`).toBe("hit");
  return again;
}

/** Reads `path` as each viewer until it is cached, then proves a hit costs one round trip. */
async function warm(paths: string[], viewers: Viewer[]): Promise<void> {
  for (const path of paths) {
    for (const viewer of viewers) {
      const first = await read(path, viewer);
      await first.arrayBuffer();
      const again = await readUntilHit(path, viewer);
      // The token check (if any) and the validator, in one batch.
      expect(roundTrips(again), `${viewer.name} ${path}`).toBe(1);
      expect(await again.json()).toEqual(await (await read(path, viewer)).json());
    }
  }
}

/** The next read of `path` by each viewer is computed afresh and shows the change (`check`). */
async function expectFresh(path: string, viewers: Viewer[], check: (body: any, viewer: Viewer) => void): Promise<void> {
  for (const viewer of viewers) {
    const response = await read(path, viewer);
    expect(response.headers.get("x-cache"), `${viewer.name} ${path}`).not.toBe("hit");
    check(await response.json(), viewer);
  }
}

function patch(path: string, token: string, body: unknown, ifMatch: string): Promise<Response> {
  return api(path, {
    method: "PATCH",
    headers: { ...bearer(token), "content-type": "application/json", "if-match": ifMatch },
    body: JSON.stringify(body),
  });
}

const versionOf = async (path: string) => `"${((await (await api(path)).json()) as Body).version}"`;

/** A product of a fresh owner (public profile), with a chain of components three levels deep. */
async function setUp() {
  const owner = await verifiedUser("cacheowner");
  expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "public" } })).status).toBe(200);
  const other = await verifiedUser("cacheother");
  const admin = await bootstrapAdmin();
  const brand = `brand${crypto.randomUUID().slice(0, 8)}`;
  const created = await postJson(
    "/v1/products",
    {
      name: "Cached kettle",
      brand,
      components: [
        {
          name: "Lid",
          amount_in_parent: 1,
          components: [{ name: "Hinge", amount_in_parent: 1, components: [{ name: "Pin", amount_in_parent: 2 }] }],
        },
      ],
    },
    bearer(owner.tokens.access_token),
  );
  expect(created.status).toBe(201);
  const body = (await created.json()) as Body;
  const lid = body.components[0].id as number;
  const tree = (await (await api(`/v1/products/${body.id}/components/tree?recursion_depth=10`)).json()) as Body[];
  const hinge = tree[0]!.components[0].id as number;
  const pin = tree[0]!.components[0].components[0].id as number;
  const viewers: Viewer[] = [
    { name: "anonymous", token: null },
    { name: "other", token: other.tokens.access_token },
    { name: "owner", token: owner.tokens.access_token },
    { name: "moderator", token: admin.tokens.access_token },
  ];
  const paths = {
    product: `/v1/products/${body.id}`,
    lid: `/v1/components/${lid}`,
    hinge: `/v1/components/${hinge}`,
    tree: `/v1/products/${body.id}/components/tree?recursion_depth=10`,
    page: `/v1/products/${body.id}/components`,
    list: `/v1/products?brand[in]=${brand}`,
    facets: `/v1/products/facets?fields=brand&brand[in]=${brand}`,
  };
  return { owner, other, admin, id: body.id as number, lid, hinge, pin, brand, viewers, paths };
}

const treeNames = (nodes: Body[]): string[] => nodes.flatMap((node) => [node.name, ...treeNames(node.components)]);

// The moderator enrols TOTP once per file, which may wait out the end of a TOTP step (4 s).
describe("cached public reads", { timeout: 20_000 }, () => {
  it("serve a copy from this isolate's memory or from the Workers cache, whichever holds it, and never a stale one from either", async () => {
    const s = await setUp();
    const anonymous = s.viewers[0]!;
    const owner = s.viewers[2]!;
    await warm([s.paths.product], [anonymous]);
    const expectHit = async () => {
      const hit = await read(s.paths.product, anonymous);
      expect(hit.headers.get("x-cache")).toBe("hit");
      expect(roundTrips(hit)).toBe(1);
      return (await hit.json()) as Body;
    };
    const shared = await caches.open(CACHE_NAME);
    const key = cacheKey(new URL(s.paths.product, ORIGIN), "anonymous");
    // Only in memory: the Workers cache lost its copy (another data centre's isolate, an eviction).
    expect(await shared.delete(key)).toBe(true);
    expect((await expectHit()).name).toBe("Cached kettle");
    // Only in the Workers cache: this isolate's memory is new. The copy is read from there, and
    // is then in memory again (the Workers cache's copy removed, still a hit).
    forgetRecentReads();
    await read(s.paths.product, anonymous);
    await readUntilHit(s.paths.product, anonymous);
    forgetRecentReads();
    expect((await expectHit()).name).toBe("Cached kettle");
    expect(await shared.delete(key)).toBe(true);
    expect((await expectHit()).name).toBe("Cached kettle");
    // In neither tier (the Workers cache's copy went above): computed afresh.
    forgetRecentReads();
    const computed = await read(s.paths.product, anonymous);
    expect(computed.headers.get("x-cache")).toBe("miss");
    // A write makes a copy stale in either tier: in memory...
    await readUntilHit(s.paths.product, anonymous);
    const renamed = await patch(s.paths.product, owner.token!, { name: "Renamed kettle" }, await versionOf(s.paths.product));
    expect(renamed.status).toBe(200);
    await expectFresh(s.paths.product, [anonymous], (body) => expect(body.name).toBe("Renamed kettle"));
    // ... and in the Workers cache, with nothing in memory.
    await readUntilHit(s.paths.product, anonymous);
    const version = await versionOf(s.paths.product);
    forgetRecentReads();
    const again = await patch(s.paths.product, owner.token!, { name: "Kettle renamed twice" }, version);
    expect(again.status).toBe(200);
    await expectFresh(s.paths.product, [anonymous], (body) => expect(body.name).toBe("Kettle renamed twice"));
  });

  it("keep queries apart that differ only in how their values are escaped, even escapes that do not decode", async () => {
    const owner = await verifiedUser("cacheescapes");
    const brand = `brand${crypto.randomUUID().slice(0, 8)}`;
    const created = await postJson("/v1/products", { name: "Mark \uFFFD here", brand }, bearer(owner.tokens.access_token));
    expect(created.status).toBe(201);
    const anonymous: Viewer = { name: "anonymous", token: null };
    // U+FFFD spelled out, then a lone byte that does not decode (URLSearchParams would make it U+FFFD too).
    const replacement = `/v1/products?brand[in]=${brand}&name[ilike]=%EF%BF%BD`;
    await warm([replacement], [anonymous]);
    expect(((await (await read(replacement, anonymous)).json()) as Body).total).toBe(1);
    const lone = await read(`/v1/products?brand[in]=${brand}&name[ilike]=%C3`, anonymous);
    expect(lone.headers.get("x-cache")).not.toBe("hit");
    expect(((await lone.json()) as Body).total).toBe(0);
  });

  it("serve a repeated read from the cache in one round trip, for every viewer class, with ETag and 304", async () => {
    const s = await setUp();
    await warm(Object.values(s.paths), s.viewers);
    const first = await read(s.paths.product, s.viewers[0]!);
    const etag = first.headers.get("etag")!;
    expect(first.headers.get("cache-control")).toBe("no-store");
    const notModified = await api(s.paths.product, { headers: { "if-none-match": etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("x-cache")).toBe("hit");
    expect(roundTrips(notModified)).toBe(1);
    // Suggestions are the same for every viewer: one copy, and no token check at all.
    const suggest = `/v1/products/suggestions/brands?search=${s.brand}`;
    await read(suggest, s.viewers[0]!);
    const signedIn = await readUntilHit(suggest, s.viewers[1]!);
    expect(roundTrips(signedIn)).toBe(1);
  });

  it("keep viewer classes apart: private owners, pending media and moderation powers never leak", async () => {
    const s = await setUp();
    expect((await patchMe(s.owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    await pendingWithoutJob("files", s.id, s.owner.id, notes("pending notes"));
    // The owner and the moderator read first, so their copies are cached before anyone else reads.
    for (const viewer of [s.viewers[2]!, s.viewers[3]!, s.viewers[2]!, s.viewers[3]!]) {
      const body = (await (await read(s.paths.product, viewer)).json()) as Body;
      expect(body.owner_username).toBe(s.owner.username);
      expect(body.files).toHaveLength(1);
    }
    for (const viewer of [s.viewers[0]!, s.viewers[1]!, s.viewers[0]!, s.viewers[1]!]) {
      const body = (await (await read(s.paths.product, viewer)).json()) as Body;
      expect(body.owner_username, viewer.name).toBeNull();
      expect(body.files, viewer.name).toEqual([]);
    }
    const list = (await (await read(s.paths.list, s.viewers[1]!)).json()) as Body;
    expect(list.items[0].owner_username).toBeNull();
    const own = (await (await read(s.paths.list, s.viewers[2]!)).json()) as Body;
    expect(own.items[0].owner_username).toBe(s.owner.username);
  });

  it("are invalidated by a change of the record's fields, and by moderation", async () => {
    const s = await setUp();
    await warm([s.paths.product, s.paths.lid, s.paths.list, s.paths.facets], s.viewers);
    expect(
      (await patch(s.paths.product, s.owner.tokens.access_token, { name: "Renamed kettle" }, await versionOf(s.paths.product))).status,
    ).toBe(200);
    await expectFresh(s.paths.product, s.viewers, (body) => expect(body.name).toBe("Renamed kettle"));
    await expectFresh(s.paths.list, s.viewers, (body) => expect(body.items[0].name).toBe("Renamed kettle"));

    await warm([s.paths.product, s.paths.lid, s.paths.list], s.viewers);
    const moderated = await patch(
      s.paths.lid,
      s.admin.tokens.access_token,
      { name: "Moderated lid", brand: "otherbrand" },
      await versionOf(s.paths.lid),
    );
    expect(moderated.status).toBe(200);
    await expectFresh(s.paths.lid, s.viewers, (body) => expect(body.name).toBe("Moderated lid"));
    await expectFresh(s.paths.product, s.viewers, (body) => expect(body.components[0].name).toBe("Moderated lid"));
    // The component's brand counts among the suggestions (over every record).
    const suggestions = (await (await read("/v1/products/suggestions/brands?search=otherb", s.viewers[0]!)).json()) as Body;
    expect(suggestions.items).toContain("otherbrand");
  });

  it("are invalidated by a change of a component at any depth", async () => {
    const s = await setUp();
    await warm([s.paths.tree, s.paths.hinge, s.paths.page], s.viewers);
    expect(
      (
        await patch(
          `/v1/components/${s.pin}`,
          s.owner.tokens.access_token,
          { name: "Steel pin" },
          await versionOf(`/v1/components/${s.pin}`),
        )
      ).status,
    ).toBe(200);
    await expectFresh(s.paths.tree, s.viewers, (body) => expect(treeNames(body)).toEqual(["Lid", "Hinge", "Steel pin"]));
    await expectFresh(s.paths.hinge, s.viewers, (body) => expect(body.components[0].name).toBe("Steel pin"));

    await warm([s.paths.tree, s.paths.page, s.paths.product], s.viewers);
    const added = await postJson(
      `/v1/products/${s.id}/components`,
      { name: "Spout", amount_in_parent: 1 },
      bearer(s.owner.tokens.access_token),
    );
    expect(added.status).toBe(201);
    await expectFresh(s.paths.page, s.viewers, (body) => expect(body.items.map((c: Body) => c.name)).toEqual(["Lid", "Spout"]));
    await expectFresh(s.paths.product, s.viewers, (body) => expect(body.components).toHaveLength(2));

    await warm([s.paths.tree, s.paths.product], s.viewers);
    expect((await api(`/v1/components/${s.hinge}`, { method: "DELETE", headers: bearer(s.owner.tokens.access_token) })).status).toBe(204);
    await expectFresh(s.paths.tree, s.viewers, (body) => expect(treeNames(body)).toEqual(["Lid", "Spout"]));
  });

  it("are invalidated by a change of a bill of materials", async () => {
    const s = await setUp();
    await warm([s.paths.lid, s.paths.product], s.viewers);
    const added = await postJson(`/v1/components/${s.lid}/materials/${steel}`, { quantity: 0.2 }, bearer(s.owner.tokens.access_token));
    expect(added.status, await added.clone().text()).toBe(201);
    await expectFresh(s.paths.lid, s.viewers, (body) =>
      expect(body.bill_of_materials).toMatchObject([{ material_id: steel, quantity: 0.2 }]),
    );

    await warm([s.paths.lid], s.viewers);
    // A reference-data write: the material's name shows in every bill that holds it.
    await env.DB.prepare("UPDATE materials SET name = ? WHERE id = ?").bind("Stainless steel", steel).run();
    await expectFresh(s.paths.lid, s.viewers, (body) => expect(body.bill_of_materials[0].material_name).toBe("Stainless steel"));
    await env.DB.prepare("UPDATE materials SET name = 'Steel' WHERE id = ?").bind(steel).run();
  });

  it("are invalidated by media becoming clean (the media job) or deleted", async () => {
    const s = await setUp();
    const file = await pendingWithoutJob("files", s.id, s.owner.id, notes("lab notes"));
    await warm([s.paths.product], s.viewers);
    await scan("files", file.id);
    await expectFresh(s.paths.product, s.viewers, (body) => expect(body.files).toMatchObject([{ id: file.id, status: "clean" }]));

    await warm([s.paths.product], s.viewers);
    const deleted = await api(`/v1/products/${s.id}/files/${file.id}`, { method: "DELETE", headers: bearer(s.owner.tokens.access_token) });
    expect(deleted.status).toBe(204);
    await expectFresh(s.paths.product, s.viewers, (body) => expect(body.files).toEqual([]));
  });

  it("are invalidated by the owner's profile visibility", async () => {
    const s = await setUp();
    await warm([s.paths.product, s.paths.tree, s.paths.list], s.viewers);
    expect((await patchMe(s.owner.tokens.access_token, { preferences: { profile_visibility: "community" } })).status).toBe(200);
    const shownTo = (viewer: Viewer) => viewer.token !== null;
    await expectFresh(s.paths.product, s.viewers, (body, viewer) => expect(body.owner_username !== null).toBe(shownTo(viewer)));
    await expectFresh(s.paths.tree, s.viewers, (body, viewer) => expect(body[0].owner_username !== null).toBe(shownTo(viewer)));
    await expectFresh(s.paths.list, s.viewers, (body, viewer) => expect(body.items[0].owner_username !== null).toBe(shownTo(viewer)));
  });

  it("are invalidated by the owner's account deletion (anonymised products)", async () => {
    const s = await setUp();
    await warm([s.paths.product, s.paths.tree, s.paths.list], s.viewers);
    const deleted = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...bearer(s.owner.tokens.access_token), "content-type": "application/json" },
      body: JSON.stringify({ current_password: s.owner.password }),
    });
    expect(deleted.status).toBe(204);
    // The owner's token died with the account: it reads as anonymous (below).
    const others = s.viewers.filter((viewer) => viewer.name !== "owner");
    await expectFresh(s.paths.product, others, (body, viewer) => {
      expect(body.owner_id).not.toBe(s.owner.id);
      // A moderator sees the system account that holds anonymised products; everyone else, no owner.
      if (viewer.name !== "moderator") expect([body.owner_id, body.owner_username]).toEqual([null, null]);
    });
    await expectFresh(s.paths.list, others, (body, viewer) =>
      expect(body.items[0].owner_username !== null).toBe(viewer.name === "moderator"),
    );
    const owner = await read(s.paths.product, s.viewers[2]!);
    expect(((await owner.json()) as Body).owner_username).toBeNull();
  });

  it("keep token revocation immediate: a revoked token reads as anonymous, and owner=me answers 401", async () => {
    const s = await setUp();
    expect((await patchMe(s.owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    await warm([s.paths.product, "/v1/products?owner=me"], [s.viewers[2]!]);
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(s.owner.tokens.access_token) })).status).toBe(204);
    const after = await read(s.paths.product, s.viewers[2]!);
    // The token check and the validator, which find the token revoked; then the anonymous read.
    expect(after.headers.get("x-cache")).toBe("miss");
    expect(roundTrips(after)).toBe(2);
    expect(((await after.json()) as Body).owner_username).toBeNull();
    await expectProblem(
      await api("/v1/products?owner=me", { headers: bearer(s.owner.tokens.access_token) }),
      401,
      "AUTHENTICATION_REQUIRED",
    );
    await expectProblem(await api("/v1/users/me", { headers: bearer(s.owner.tokens.access_token) }), 401, "INVALID_TOKEN");
  });

  it("stop looking for list copies while they are hardly ever current, probe now and then, and look again once forgotten", async () => {
    const s = await setUp();
    const anonymous = s.viewers[0]!;
    forgetRecentReads();
    // A window (256) of catalogue lookups that find nothing: each list URL is read once, 16 at a time.
    for (let first = 1; first <= 256; first += 16) {
      const pages = Array.from({ length: 16 }, (_, i) => first + i);
      const responses = await Promise.all(pages.map((page) => read(`/v1/products?size=1&page=${page}`, anonymous)));
      for (const response of responses) {
        expect(response.headers.get("x-cache")).toBe("miss");
        await response.arrayBuffer();
      }
    }
    // Now list reads are answered as uncached ones (no lookup, no validator, no copy kept), but
    // for one in 16, a probe, which keeps its answer; a URL whose copy this isolate holds is
    // looked up as ever. So a URL read over and over goes uncached until a probe, then is served
    // from the probe's copy.
    const statuses: (string | null)[] = [];
    for (let i = 0; i < 40 && statuses.at(-1) !== "hit"; i++) {
      const response = await read("/v1/products?size=2&page=1", anonymous);
      statuses.push(response.headers.get("x-cache"));
      await response.arrayBuffer();
      if (statuses.at(-1) === "miss") await scheduler.wait(20);
    }
    const probe = statuses.indexOf("miss");
    expect(probe, JSON.stringify(statuses)).toBeGreaterThan(0);
    expect(probe).toBeLessThan(16);
    expect(
      statuses.slice(0, probe).every((status) => status === null),
      JSON.stringify(statuses),
    ).toBe(true);
    expect(statuses.slice(probe + 1), JSON.stringify(statuses)).toEqual(["hit"]);
    // Records are tallied apart: a product's copies are still looked for and served.
    await warm([s.paths.product], [anonymous]);
    // A fresh tally (a new isolate) looks again.
    forgetRecentReads();
    const first = await read(s.paths.list, anonymous);
    expect(first.headers.get("x-cache")).toBe("miss");
    await first.arrayBuffer();
    await readUntilHit(s.paths.list, anonymous);
  });

  it("read a signed-in product, component page, tree and list in one round trip when nothing is cached", async () => {
    const s = await setUp();
    for (const path of [s.paths.product, s.paths.page, s.paths.tree, s.paths.list, s.paths.facets]) {
      const response = await read(path, s.viewers[1]!);
      expect(response.headers.get("x-cache"), path).toBe("miss");
      expect(roundTrips(response), path).toBe(1);
    }
    // owner=me needs the viewer before the read: the token check first, then the read; a stale
    // copy costs no more (its validator check answered the token check too); anonymous, no trip.
    expect(roundTrips(await read("/v1/products?owner=me", s.viewers[2]!))).toBe(2);
    await readUntilHit("/v1/products?owner=me", s.viewers[2]!);
    expect((await postJson("/v1/products", { name: "Another kettle" }, bearer(s.owner.tokens.access_token))).status).toBe(201);
    const stale = await read("/v1/products?owner=me", s.viewers[2]!);
    expect([stale.headers.get("x-cache"), roundTrips(stale)]).toEqual(["miss", 2]);
    expect(((await stale.json()) as Body).items).toHaveLength(2);
    const anonymous = await api("/v1/products?owner=me");
    await expectProblem(anonymous, 401, "AUTHENTICATION_REQUIRED");
    expect(roundTrips(anonymous)).toBe(0);
  });
});
