import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { scan, uploaded } from "../../support/media";
import { createProduct, referenceRow } from "../../support/releases";

// Every kind of write that changes a record's quality shows at once (issue 32, "always current"):
// in the record's detail, in the list it appears in (the products list for a base product, its
// parent's component page for a component) and at /quality, for an anonymous and a signed-in
// reader, with the cached copies of all three warmed (served from the cache) before the write.

type Body = Record<string, any>;
interface Viewer {
  name: string;
  headers: Record<string, string>;
}
interface Watched {
  path: string;
  score: (body: Body) => number;
}

let owner: Awaited<ReturnType<typeof verifiedUser>>;
let viewers: Viewer[];
let steel: number;

beforeAll(async () => {
  owner = await verifiedUser("fresh");
  viewers = [
    { name: "anonymous", headers: {} },
    { name: "signed in", headers: bearer(owner.tokens.access_token) },
  ];
  steel = await referenceRow("materials", "Steel (freshness test)");
});

const ownerHeaders = () => bearer(owner.tokens.access_token);

/** What shows a base product's score: its detail, its /quality and its item in a list that holds only it. */
function product(id: number, name: string): Watched[] {
  return [
    { path: `/v1/products/${id}`, score: (b) => b.quality_score },
    { path: `/v1/products/${id}/quality`, score: (b) => b.score },
    { path: `/v1/products?name[ilike]=${encodeURIComponent(name)}`, score: (b) => b.items.find((i: Body) => i.id === id).quality_score },
  ];
}

/** What shows a component's score: its detail, its /quality and its item in its parent's component page. */
function component(id: number, parentPath: string): Watched[] {
  return [
    { path: `/v1/components/${id}`, score: (b) => b.quality_score },
    { path: `/v1/components/${id}/quality`, score: (b) => b.score },
    { path: `${parentPath}/components`, score: (b) => b.items.find((i: Body) => i.id === id).quality_score },
  ];
}

async function read(path: string, viewer: Viewer): Promise<Response> {
  const response = await api(path, { headers: viewer.headers });
  expect(response.status, `${viewer.name} ${path}: ${await response.clone().text()}`).toBe(200);
  return response;
}

/** Every watched path with every viewer: the reads of one step run side by side. */
const pairs = (watched: Watched[]) => watched.flatMap((w) => viewers.map((viewer) => ({ ...w, viewer })));

/** Reads every watched path as every viewer until the read is served from the cache, and checks the score there. */
async function cached(watched: Watched[], score: number): Promise<void> {
  await Promise.all(
    pairs(watched).map(async ({ path, score: of, viewer }) => {
      // A miss stores its copy after answering: the read after it (or a few ms later) is a hit.
      let again = await read(path, viewer);
      for (let tries = 0; again.headers.get("x-cache") !== "hit" && tries < 10; tries++) {
        await again.arrayBuffer();
        if (tries > 0) await scheduler.wait(10);
        again = await read(path, viewer);
      }
      expect(again.headers.get("x-cache"), `${viewer.name} ${path}`).toBe("hit");
      expect(of(await again.json()), `${viewer.name} ${path} before`).toBe(score);
    }),
  );
}

/** The next read of every watched path, by every viewer, is computed afresh and shows `score`. */
async function shows(watched: Watched[], score: number): Promise<void> {
  await Promise.all(
    pairs(watched).map(async ({ path, score: of, viewer }) => {
      const response = await read(path, viewer);
      expect(response.headers.get("x-cache"), `${viewer.name} ${path}`).not.toBe("hit");
      expect(of(await response.json()), `${viewer.name} ${path} after`).toBe(score);
    }),
  );
}

/** Warms the caches at `before`, runs `write`, and expects `after` everywhere at once. */
async function changes(watched: Watched[], before: number, write: () => Promise<unknown>, after: number): Promise<void> {
  expect(after).not.toBe(before);
  await cached(watched, before);
  await write();
  await shows(watched, after);
}

async function ok(response: Promise<Response>, status: number): Promise<Body> {
  const answered = await response;
  expect(answered.status, await answered.clone().text()).toBe(status);
  return status === 204 ? {} : ((await answered.json()) as Body);
}

const patch = (path: string, body: unknown, version: number) =>
  api(path, {
    method: "PATCH",
    headers: { ...ownerHeaders(), "content-type": "application/json", "if-match": `"${version}"` },
    body: JSON.stringify(body),
  });

const unique = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;

describe("quality_score is current after every kind of write, through the read caches", { timeout: 30_000 }, () => {
  it("the record's own fields, and a product type set or deleted", async () => {
    const name = unique("Bare radio");
    const made = await createProduct(ownerHeaders(), { name });
    const watched = product(made.id, name);
    // Nothing set: type, weight, dimensions, image, breakdown and notes fail (0 of 6).
    await changes(watched, 0, () => ok(patch(`/v1/products/${made.id}`, { weight_g: 500 }, 1), 200), 0.167);
    const radios = await referenceRow("product_types", unique("Radio"));
    await changes(watched, 0.167, () => ok(patch(`/v1/products/${made.id}`, { product_type_id: radios }, 2), 200), 0.333);
    // The type is deleted (what DELETE /v1/admin/product-types/{id} runs): the product loses it
    // (foreign key SET NULL), and the check with it.
    await changes(watched, 0.333, () => env.DB.prepare("DELETE FROM product_types WHERE id = ?").bind(radios).run(), 0.167);
  });

  it("a component added, re-weighed, its amount changed, and deleted", async () => {
    const name = unique("Speaker");
    const made = await createProduct(ownerHeaders(), { name, weight_g: 500 });
    const watched = product(made.id, name);
    let part = 0;
    // A breakdown, and 2 x 250 g balances 500 g: 3 of 7.
    await changes(
      watched,
      0.167,
      async () => {
        part = (
          await ok(
            postJson(`/v1/products/${made.id}/components`, { name: "Driver", amount_in_parent: 2, weight_g: 250 }, ownerHeaders()),
            201,
          )
        ).id;
      },
      0.429,
    );
    // 2 x 500 g against 500 g.
    await changes(watched, 0.429, () => ok(patch(`/v1/components/${part}`, { weight_g: 500 }, 1), 200), 0.286);
    // 1 x 500 g.
    await changes(watched, 0.286, () => ok(patch(`/v1/components/${part}`, { amount_in_parent: 1 }, 2), 200), 0.429);
    await changes(watched, 0.429, () => ok(api(`/v1/components/${part}`, { method: "DELETE", headers: ownerHeaders() }), 204), 0.167);
  });

  it("a component moved to another parent (no route moves one; the triggers cover it): both parents", async () => {
    const [first, second] = [unique("Old parent"), unique("New parent")];
    const from = await createProduct(ownerHeaders(), {
      name: first,
      weight_g: 100,
      components: [{ name: "Wanderer", amount_in_parent: 1, weight_g: 100 }],
    });
    const to = await createProduct(ownerHeaders(), { name: second, weight_g: 100 });
    const watched = [...product(from.id, first), ...product(to.id, second)];
    await cached(product(from.id, first), 0.429);
    await cached(product(to.id, second), 0.167);
    await env.DB.prepare("UPDATE products SET parent_id = ?, root_id = ? WHERE id = ?").bind(to.id, to.id, from.components[0]!.id).run();
    await shows(product(from.id, first), 0.167);
    await shows(product(to.id, second), 0.429);
    expect(watched).toHaveLength(6);
  });

  it("a bill-of-materials entry added, changed and removed, on a component: its detail, page and /quality", async () => {
    const made = await createProduct(ownerHeaders(), {
      name: unique("Toaster"),
      components: [{ name: "Heater", amount_in_parent: 1, weight_g: 1000 }],
    });
    const heater = made.components[0]!.id;
    const watched = component(heater, `/v1/products/${made.id}`);
    const entry = `/v1/components/${heater}/materials/${steel}`;
    // A component weighing 1000 g: weight passes; dimensions, image, breakdown fail (1 of 4).
    await changes(watched, 0.25, () => ok(postJson(entry, { quantity: 1, unit: "kg" }, ownerHeaders()), 201), 0.6);
    const change = () =>
      ok(
        api(entry, {
          method: "PATCH",
          headers: { ...ownerHeaders(), "content-type": "application/json" },
          body: JSON.stringify({ quantity: 2 }),
        }),
        200,
      );
    await changes(watched, 0.6, change, 0.4);
    await changes(watched, 0.4, () => ok(api(entry, { method: "DELETE", headers: ownerHeaders() }), 204), 0.25);
  });

  it("an image that becomes clean (the media job), and its deletion; an upload still pending counts for nothing", async () => {
    const name = unique("Clock");
    const made = await createProduct(ownerHeaders(), { name });
    const watched = product(made.id, name);
    const image = await uploaded(`/v1/products/${made.id}/images`, owner.tokens.access_token, {
      bytes: encodeJpeg(16, 16, (x, y) => [x * 16, y * 16, 0]),
      name: "clock.jpg",
      type: "image/jpeg",
    });
    await shows(watched, 0);
    await changes(watched, 0, () => scan("images", image.id), 0.167);
    await changes(
      watched,
      0.167,
      () => ok(api(`/v1/products/${made.id}/images/${image.id}`, { method: "DELETE", headers: ownerHeaders() }), 204),
      0,
    );
  });
});
