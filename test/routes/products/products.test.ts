import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, bearerLogin, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

let materials: { steel: number; pp: number };

beforeAll(async () => {
  await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Steel'), ('Polypropylene')").run();
  const rows = await env.DB.prepare("SELECT id, name FROM materials").all<{ id: number; name: string }>();
  const byName = Object.fromEntries(rows.results.map((row) => [row.name, row.id]));
  materials = { steel: byName.Steel!, pp: byName.Polypropylene! };
});

const create = (token: string, body: unknown, path = "/v1/products") => postJson(path, body, bearer(token));

function nested(depth: number): Record<string, unknown> {
  return depth === 0
    ? { name: "Leaf part", amount_in_parent: 1 }
    : { name: `Level ${depth}`, amount_in_parent: 1, components: [nested(depth - 1)] };
}

describe("creating a base product", () => {
  it("stores the product, nested components, bill of materials and videos in two round trips", async () => {
    const user = await verifiedUser("maker");
    const response = await create(user.tokens.access_token, {
      name: "Coffee grinder",
      brand: "  KRUPS ",
      weight_g: 1450,
      height_cm: 10,
      width_cm: 20,
      depth_cm: 30,
      circularity_properties: { recyclability: "  PP housing ", disassemblability: "", remanufacturability: null },
      bill_of_materials: [{ material_id: materials.pp, quantity: 0.4 }],
      videos: [{ url: "https://video.example/watch?v=1", title: "Teardown" }],
      components: [
        {
          name: "Motor",
          amount_in_parent: 1,
          bill_of_materials: [{ material_id: materials.steel, quantity: 120, unit: "g" }],
          components: [{ name: "Rotor", amount_in_parent: 1 }],
        },
        { name: "Burr", amount_in_parent: 2 },
      ],
    });
    expect(response.status, await response.clone().text()).toBe(201);
    // The access-token check, then one batch that reserves the ids and writes every row.
    expect(roundTrips(response)).toBe(2);
    const body = (await response.json()) as Record<string, any>;
    expect(response.headers.get("location")).toBe(`/v1/products/${body.id}`);
    expect(body).toMatchObject({
      name: "Coffee grinder",
      brand: "krups",
      volume_cm3: 6000,
      version: 1,
      owner_id: user.id,
      owner_username: user.username,
      circularity_properties: { recyclability: "PP housing", disassemblability: null, remanufacturability: null },
      bill_of_materials: [{ material_id: materials.pp, material_name: "Polypropylene", quantity: 0.4, unit: "kg" }],
      videos: [{ url: "https://video.example/watch?v=1", title: "Teardown" }],
      images: [],
      files: [],
    });
    expect(body.components.map((c: any) => [c.name, c.parent_id, c.amount_in_parent])).toEqual([
      ["Motor", body.id, 1],
      ["Burr", body.id, 2],
    ]);

    // What the create answered is what a read answers.
    const read = await api(`/v1/products/${body.id}`, { headers: bearer(user.tokens.access_token) });
    expect(read.status).toBe(200);
    // One batch: the token check, the cache validator, the record and all it embeds.
    expect(roundTrips(read)).toBe(1);
    expect(await read.json()).toEqual(body);

    const motor = await api(`/v1/components/${body.components[0].id}`);
    expect(motor.status).toBe(200);
    expect(roundTrips(motor)).toBe(1);
    const motorBody = (await motor.json()) as Record<string, any>;
    expect(motorBody.bill_of_materials).toEqual([{ material_id: materials.steel, material_name: "Steel", quantity: 120, unit: "g" }]);
    expect(motorBody.components.map((c: any) => c.name)).toEqual(["Rotor"]);
  });

  it("needs a signed-in, verified account", async () => {
    await expectProblem(await postJson("/v1/products", { name: "Kettle" }), 401, "AUTHENTICATION_REQUIRED");
    const unverified = await bearerLogin(await registerUser());
    await expectProblem(await create(unverified.access_token, { name: "Kettle" }), 403, "EMAIL_NOT_VERIFIED");
  });

  it("refuses unknown materials and product types with 422 pointing at them, creating nothing", async () => {
    const user = await verifiedUser("maker");
    const before = await env.DB.prepare("SELECT count(*) AS n FROM products").first<{ n: number }>();
    const response = await create(user.tokens.access_token, {
      name: "Toaster",
      product_type_id: 999_999,
      components: [{ name: "Element", amount_in_parent: 1, bill_of_materials: [{ material_id: 999_999, quantity: 1 }] }],
    });
    const problem = await expectProblem(response, 422, "VALIDATION_FAILED");
    expect(problem.errors?.map((e) => e.pointer).sort()).toEqual(["/components/0/bill_of_materials/0/material_id", "/product_type_id"]);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM products").first<{ n: number }>()).toEqual(before);
  });

  it("refuses components nested more than 10 levels below the product with 400", async () => {
    const user = await verifiedUser("maker");
    expect((await create(user.tokens.access_token, { name: "Deep", components: [nested(9)] })).status).toBe(201);
    await expectProblem(await create(user.tokens.access_token, { name: "Too deep", components: [nested(10)] }), 400, "COMPONENT_TOO_DEEP");
  });

  it("refuses read-only and unknown members with 422", async () => {
    const user = await verifiedUser("maker");
    const problem = await expectProblem(
      await create(user.tokens.access_token, { name: "Lamp", owner_id: 1, version: 3 }),
      422,
      "VALIDATION_FAILED",
    );
    expect(problem.errors?.map((e) => e.pointer).sort()).toEqual(["/owner_id", "/version"]);
  });
});

describe("components under a parent", () => {
  it("creates under your product or component, 404 under someone else's, 400 past level 10", async () => {
    const [alice, bob] = [await verifiedUser("alice"), await verifiedUser("bob")];
    const product = (await (await create(alice.tokens.access_token, { name: "Blender" })).json()) as { id: number };
    const child = await create(alice.tokens.access_token, { name: "Jar", amount_in_parent: 1 }, `/v1/products/${product.id}/components`);
    expect(child.status).toBe(201);
    expect(roundTrips(child)).toBe(2);
    const jar = (await child.json()) as { id: number; parent_id: number };
    expect(jar.parent_id).toBe(product.id);
    expect(child.headers.get("location")).toBe(`/v1/components/${jar.id}`);

    const grandchild = await create(alice.tokens.access_token, { name: "Lid", amount_in_parent: 1 }, `/v1/components/${jar.id}/components`);
    expect(grandchild.status).toBe(201);

    await expectProblem(
      await create(bob.tokens.access_token, { name: "Intruder", amount_in_parent: 1 }, `/v1/products/${product.id}/components`),
      404,
      "NOT_FOUND",
    );
    // The kinds do not mix: a component id on a product route is 404, and the other way round.
    await expectProblem(
      await create(alice.tokens.access_token, { name: "Xylophone key", amount_in_parent: 1 }, `/v1/products/${jar.id}/components`),
      404,
      "NOT_FOUND",
    );
    await expectProblem(await api(`/v1/products/${jar.id}`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/components/${product.id}`), 404, "NOT_FOUND");

    const deep = (await (await create(alice.tokens.access_token, { name: "Deep", components: [nested(9)] })).json()) as {
      components: { id: number }[];
    };
    let leaf = deep.components[0]!.id;
    for (let level = 2; level <= 10; level++) {
      const next = (await (await api(`/v1/components/${leaf}`)).json()) as { components: { id: number }[] };
      leaf = next.components[0]!.id;
    }
    await expectProblem(
      await create(alice.tokens.access_token, { name: "Eleventh", amount_in_parent: 1 }, `/v1/components/${leaf}/components`),
      400,
      "COMPONENT_TOO_DEEP",
    );
  });
});

describe("reads", () => {
  it("send an ETag, answer If-None-Match with 304, and are not stored by shared caches", async () => {
    const user = await verifiedUser("maker");
    const product = (await (await create(user.tokens.access_token, { name: "Iron" })).json()) as { id: number };
    const first = await api(`/v1/products/${product.id}`);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const again = await api(`/v1/products/${product.id}`, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
  });

  it("show the owner as far as the owner's profile visibility allows", async () => {
    const owner = await verifiedUser("private");
    await env.DB.prepare("UPDATE users SET profile_visibility = 'private' WHERE id = ?").bind(owner.id).run();
    const product = (await (await create(owner.tokens.access_token, { name: "Radio" })).json()) as { id: number };
    const stranger = await verifiedUser("stranger");
    const anonymous = (await (await api(`/v1/products/${product.id}`)).json()) as Record<string, unknown>;
    const signedIn = (await (await api(`/v1/products/${product.id}`, { headers: bearer(stranger.tokens.access_token) })).json()) as Record<
      string,
      unknown
    >;
    const own = (await (await api(`/v1/products/${product.id}`, { headers: bearer(owner.tokens.access_token) })).json()) as Record<
      string,
      unknown
    >;
    expect([anonymous.owner_username, signedIn.owner_username, own.owner_username]).toEqual([null, null, owner.username]);
    expect([anonymous.owner_id, own.owner_id]).toEqual([null, owner.id]);
  });
});

describe("deleting", () => {
  it("removes your product with its components and bill of materials; someone else's is 404", async () => {
    const [alice, bob] = [await verifiedUser("alice"), await verifiedUser("bob")];
    const product = (await (
      await create(alice.tokens.access_token, {
        name: "Fan",
        components: [{ name: "Blade", amount_in_parent: 3, bill_of_materials: [{ material_id: materials.pp, quantity: 0.1 }] }],
      })
    ).json()) as { id: number; components: { id: number }[] };
    await expectProblem(
      await api(`/v1/products/${product.id}`, { method: "DELETE", headers: bearer(bob.tokens.access_token) }),
      404,
      "NOT_FOUND",
    );
    await expectProblem(
      await api(`/v1/components/${product.id}`, { method: "DELETE", headers: bearer(alice.tokens.access_token) }),
      404,
      "NOT_FOUND",
    );
    const deleted = await api(`/v1/products/${product.id}`, { method: "DELETE", headers: bearer(alice.tokens.access_token) });
    expect(deleted.status).toBe(204);
    await expectProblem(await api(`/v1/components/${product.components[0]!.id}`), 404, "NOT_FOUND");
    const leftovers = await env.DB.prepare("SELECT count(*) AS n FROM bill_of_materials WHERE product_id = ?")
      .bind(product.components[0]!.id)
      .first<{ n: number }>();
    expect(leftovers?.n).toBe(0);
  });
});

describe("the list", () => {
  it("pages base products with filters in one round trip; owner=me needs a signed-in user", async () => {
    const user = await verifiedUser("lister");
    const brand = `brand${Date.now().toString(36)}`;
    for (const name of ["Alpha kettle", "Beta kettle"]) {
      await create(user.tokens.access_token, { name, brand: brand.toUpperCase(), components: [{ name: "Element", amount_in_parent: 1 }] });
    }
    const response = await api(`/v1/products?brand[in]=${brand}&order_by=name&size=1`);
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const page = (await response.json()) as {
      items: { name: string; brand: string }[];
      total: number;
      page: number;
      size: number;
      pages: number;
    };
    expect(page).toMatchObject({ total: 2, page: 1, size: 1, pages: 2 });
    expect(page.items.map((item) => [item.name, item.brand])).toEqual([["Alpha kettle", brand]]);

    await expectProblem(await api("/v1/products?owner=me"), 401, "AUTHENTICATION_REQUIRED");
    const mine = (await (await api("/v1/products?owner=me", { headers: bearer(user.tokens.access_token) })).json()) as { total: number };
    expect(mine.total).toBe(2);
    await expectProblem(await api("/v1/products?order_by=colour"), 422, "VALIDATION_FAILED");
  });
});

describe("create body bounds", () => {
  it("refuses more than 100 components on one level, more than 5 videos, and videos on components with 422", async () => {
    const user = await verifiedUser("bounds");
    const token = user.tokens.access_token;
    const many = Array.from({ length: 101 }, (_, i) => ({ name: `Screw ${i}`, amount_in_parent: 1 }));
    const wide = await expectProblem(await create(token, { name: "Wide", components: many }), 422, "VALIDATION_FAILED");
    expect(wide.errors?.[0]?.pointer).toBe("/components");
    const video = { url: "https://video.example/watch?v=2" };
    const videos = await expectProblem(await create(token, { name: "Filmed", videos: Array(6).fill(video) }), 422, "VALIDATION_FAILED");
    expect(videos.errors?.[0]?.pointer).toBe("/videos");
    const onComponent = await expectProblem(
      await create(token, { name: "Parent", components: [{ name: "Child", amount_in_parent: 1, videos: [video] }] }),
      422,
      "VALIDATION_FAILED",
    );
    expect(onComponent.errors?.[0]?.pointer).toBe("/components/0/videos");
    // Progressive entry: a record with no components and no materials is valid.
    expect((await create(token, { name: "Bare" })).status).toBe(201);
  });

  it("finds products by full-text search over name, description, brand and model", async () => {
    const user = await verifiedUser("search");
    const word = `zq${Date.now().toString(36)}`;
    await create(user.tokens.access_token, { name: "Hand mixer", description: `Bought for the ${word} study` });
    await create(user.tokens.access_token, { name: "Stand mixer", model: `${word.toUpperCase()}-2` });
    const page = (await (await api(`/v1/products?search=${word}&order_by=name`)).json()) as { items: { name: string }[]; total: number };
    expect(page.items.map((item) => item.name)).toEqual(["Hand mixer", "Stand mixer"]);
  });
});
