import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, bearerLogin, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

type Entry = { material_id: number; material_name: string; quantity: number; unit: string };

const m: Record<"steel" | "pp" | "copper" | "glass" | "tin", number> = { steel: 0, pp: 0, copper: 0, glass: 0, tin: 0 };
let alice: string;
let bob: string;
let unverified: string;

beforeAll(async () => {
  await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Steel'), ('Polypropylene'), ('Copper'), ('Glass'), ('Tin')").run();
  const rows = await env.DB.prepare("SELECT id, name FROM materials").all<{ id: number; name: string }>();
  const byName = Object.fromEntries(rows.results.map((row) => [row.name, row.id]));
  Object.assign(m, { steel: byName.Steel, pp: byName.Polypropylene, copper: byName.Copper, glass: byName.Glass, tin: byName.Tin });
  [alice, bob] = [(await verifiedUser("alice")).tokens.access_token, (await verifiedUser("bob")).tokens.access_token];
  unverified = (await bearerLogin(await registerUser())).access_token;
});

/** A base product of alice's with `pp` in its bill, and a component with `steel` in its bill. */
async function record(): Promise<{ product: number; component: number }> {
  const response = await postJson(
    "/v1/products",
    {
      name: "Coffee grinder",
      bill_of_materials: [{ material_id: m.pp, quantity: 0.4 }],
      components: [{ name: "Motor", amount_in_parent: 1, bill_of_materials: [{ material_id: m.steel, quantity: 120, unit: "g" }] }],
    },
    bearer(alice),
  );
  expect(response.status, await response.clone().text()).toBe(201);
  const body = (await response.json()) as { id: number; components: { id: number }[] };
  return { product: body.id, component: body.components[0]!.id };
}

function send(method: string, path: string, token: string | null, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = token ? bearer(token) : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  return api(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

const entries = async (path: string) => ((await (await api(path)).json()) as Entry[]).map((e) => [e.material_id, e.quantity, e.unit]);
const pointers = async (response: Response) => (await expectProblem(response, 422, "VALIDATION_FAILED")).errors?.map((e) => e.pointer);

describe("reading a bill of materials", () => {
  it("is public, one round trip, with an ETag; 404 for unknown records, the other kind, and materials not in the bill", async () => {
    const { product, component } = await record();
    for (const token of [null, alice]) {
      const response = await send("GET", `/v1/products/${product}/materials`, token);
      expect(response.status).toBe(200);
      // No token check: the answer is the same for every viewer.
      expect(roundTrips(response)).toBe(1);
      expect(await response.json()).toEqual([{ material_id: m.pp, material_name: "Polypropylene", quantity: 0.4, unit: "kg" }]);
      const again = await api(`/v1/products/${product}/materials`, { headers: { "if-none-match": response.headers.get("etag")! } });
      expect(again.status).toBe(304);
    }
    const one = await api(`/v1/components/${component}/materials/${m.steel}`);
    expect(one.status).toBe(200);
    expect(roundTrips(one)).toBe(1);
    expect(await one.json()).toEqual({ material_id: m.steel, material_name: "Steel", quantity: 120, unit: "g" });

    await expectProblem(await api(`/v1/products/${product}/materials/${m.steel}`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/products/999999/materials`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/products/${component}/materials`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/components/${product}/materials`), 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/components/${product}/materials/${m.pp}`), 404, "NOT_FOUND");
    expect(await pointers(await api(`/v1/products/${product}/materials/steel`))).toEqual(["#/path/material_id"]);
  });
});

describe("changing a bill of materials", () => {
  it("adds, changes and removes entries in two round trips after the token check, leaving version and updated_at alone", async () => {
    const { product } = await record();
    // An old updated_at, so that any bump would show.
    await env.DB.prepare("UPDATE products SET updated_at = 1000000000 WHERE id = ?").bind(product).run();
    const base = `/v1/products/${product}/materials`;

    const added = await send("POST", base, alice, [
      { material_id: m.steel, quantity: 2 },
      { material_id: m.copper, quantity: 30, unit: "g" },
    ]);
    expect(added.status, await added.clone().text()).toBe(201);
    expect(roundTrips(added)).toBe(3);
    expect(added.headers.get("location")).toBe(base);
    expect(((await added.json()) as Entry[]).map((e) => [e.material_name, e.quantity, e.unit])).toEqual([
      ["Copper", 30, "g"],
      ["Polypropylene", 0.4, "kg"],
      ["Steel", 2, "kg"],
    ]);

    const one = await send("POST", `${base}/${m.glass}`, alice, { quantity: 1e6 });
    expect(one.status).toBe(201);
    expect(roundTrips(one)).toBe(3);
    expect(one.headers.get("location")).toBe(`${base}/${m.glass}`);
    expect(await one.json()).toEqual({ material_id: m.glass, material_name: "Glass", quantity: 1e6, unit: "kg" });

    const patched = await send("PATCH", `${base}/${m.steel}`, alice, { quantity: 2.5, unit: "g" });
    expect(patched.status).toBe(200);
    expect(roundTrips(patched)).toBe(3);
    expect(await patched.json()).toEqual({ material_id: m.steel, material_name: "Steel", quantity: 2.5, unit: "g" });
    const unitOnly = await send("PATCH", `${base}/${m.steel}`, alice, { unit: "m" });
    expect(((await unitOnly.json()) as Entry).quantity).toBe(2.5);
    const nothing = await send("PATCH", `${base}/${m.steel}`, alice, {});
    expect(await nothing.json()).toEqual({ material_id: m.steel, material_name: "Steel", quantity: 2.5, unit: "m" });

    const removed = await send("DELETE", `${base}/${m.copper}`, alice);
    expect(removed.status).toBe(204);
    expect(roundTrips(removed)).toBe(3);
    // Ids not in the bill are ignored.
    const many = await send("DELETE", base, alice, [m.pp, m.glass, m.copper, 999999]);
    expect(many.status).toBe(204);
    expect(roundTrips(many)).toBe(3);
    expect(await entries(base)).toEqual([[m.steel, 2.5, "m"]]);

    const read = (await (await api(`/v1/products/${product}`)).json()) as {
      version: number;
      updated_at: string;
      bill_of_materials: Entry[];
    };
    expect(read).toMatchObject({ version: 1, updated_at: "2001-09-09T01:46:40Z" });
    expect(read.bill_of_materials.map((e) => e.material_id)).toEqual([m.steel]);
  });

  it("answers 404 for an entry that is not there", async () => {
    const { product, component } = await record();
    await expectProblem(await send("PATCH", `/v1/products/${product}/materials/${m.tin}`, alice, { quantity: 1 }), 404, "NOT_FOUND");
    await expectProblem(await send("DELETE", `/v1/products/${product}/materials/${m.tin}`, alice), 404, "NOT_FOUND");
    expect((await send("DELETE", `/v1/components/${component}/materials/${m.steel}`, alice)).status).toBe(204);
    await expectProblem(await send("DELETE", `/v1/components/${component}/materials/${m.steel}`, alice), 404, "NOT_FOUND");
  });

  it("adds a list all or nothing: unknown and repeated materials 422 at their index, one already there 409 naming it", async () => {
    const { product } = await record();
    const base = `/v1/products/${product}/materials`;
    expect(
      await pointers(
        await send("POST", base, alice, [
          { material_id: m.glass, quantity: 1 },
          { material_id: 999999, quantity: 1 },
        ]),
      ),
    ).toEqual(["/1/material_id"]);
    expect(
      await pointers(
        await send("POST", base, alice, [
          { material_id: m.glass, quantity: 1 },
          { material_id: m.glass, quantity: 2 },
        ]),
      ),
    ).toEqual(["/1/material_id"]);
    const clash = await expectProblem(
      await send("POST", base, alice, [
        { material_id: m.glass, quantity: 1 },
        { material_id: m.pp, quantity: 1 },
      ]),
      409,
      "BOM_ENTRY_EXISTS",
    );
    expect(clash.detail).toContain(`${m.pp} (Polypropylene)`);
    await expectProblem(await send("POST", `${base}/${m.pp}`, alice, { quantity: 1 }), 409, "BOM_ENTRY_EXISTS");
    expect(await pointers(await send("POST", `${base}/999999`, alice, { quantity: 1 }))).toEqual(["#/path/material_id"]);
    // Nothing of the refused requests was stored.
    expect(await entries(base)).toEqual([[m.pp, 0.4, "kg"]]);
  });

  it("validates quantities, units and the body's shape", async () => {
    const { product } = await record();
    const base = `/v1/products/${product}/materials`;
    const bad = [
      { material_id: m.tin, quantity: 0 },
      { material_id: m.glass, quantity: 1e6 + 1 },
      { material_id: m.copper, quantity: 1, unit: "lb" },
      { material_id: m.steel, quantity: -1, colour: "red" },
    ];
    expect(await pointers(await send("POST", base, alice, bad))).toEqual([
      "/0/quantity",
      "/1/quantity",
      "/2/unit",
      "/3/quantity",
      "/3/colour",
    ]);
    expect(await pointers(await send("POST", base, alice, []))).toEqual([""]);
    expect(await pointers(await send("POST", base, alice, { material_id: m.tin, quantity: 1 }))).toEqual([""]);
    expect(await pointers(await send("POST", `${base}/${m.tin}`, alice, { quantity: 0, unit: "lb" }))).toEqual(["/quantity", "/unit"]);
    expect(await pointers(await send("POST", `${base}/${m.tin}`, alice, { material_id: m.tin, quantity: 1 }))).toEqual(["/material_id"]);
    expect(await pointers(await send("PATCH", `${base}/${m.pp}`, alice, { quantity: 1e6 + 1, unit: "lb" }))).toEqual([
      "/quantity",
      "/unit",
    ]);
    expect(await pointers(await send("DELETE", base, alice, ["a"]))).toEqual(["/0"]);
    expect(await pointers(await send("DELETE", base, alice, []))).toEqual([""]);
    expect(
      await pointers(
        await send(
          "POST",
          base,
          alice,
          Array.from({ length: 101 }, (_, i) => ({ material_id: i + 1, quantity: 1 })),
        ),
      ),
    ).toEqual([""]);
    expect(await entries(base)).toEqual([[m.pp, 0.4, "kg"]]);
  });

  it("needs a verified account; someone else's record and the other kind are 404", async () => {
    const { product, component } = await record();
    const writes: [string, string, unknown][] = [
      ["POST", `/v1/products/${product}/materials`, [{ material_id: m.tin, quantity: 1 }]],
      ["DELETE", `/v1/products/${product}/materials`, [m.pp]],
      ["POST", `/v1/products/${product}/materials/${m.tin}`, { quantity: 1 }],
      ["PATCH", `/v1/products/${product}/materials/${m.pp}`, { quantity: 1 }],
      ["DELETE", `/v1/products/${product}/materials/${m.pp}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      await expectProblem(await send(method, path, null, body), 401, "AUTHENTICATION_REQUIRED");
      await expectProblem(await send(method, path, unverified, body), 403, "EMAIL_NOT_VERIFIED");
      await expectProblem(await send(method, path, bob, body), 404, "NOT_FOUND");
      await expectProblem(
        await send(method, path.replace(`/products/${product}`, `/components/${product}`), alice, body),
        404,
        "NOT_FOUND",
      );
      await expectProblem(
        await send(method, path.replace(`/products/${product}`, `/products/${component}`), alice, body),
        404,
        "NOT_FOUND",
      );
    }
    const bobs = await send("PATCH", `/v1/products/${product}/materials/${m.pp}`, bob, { quantity: 1 });
    // The token check and the ownership read; nothing is written.
    expect(roundTrips(bobs)).toBe(2);
    expect(await entries(`/v1/products/${product}/materials`)).toEqual([[m.pp, 0.4, "kg"]]);
  });

  it("holds at most 100 entries per record", async () => {
    const names = Array.from({ length: 100 }, (_, i) => `Alloy ${String(i).padStart(3, "0")}`);
    await env.DB.prepare(`INSERT OR IGNORE INTO materials (name) VALUES ${names.map(() => "(?)").join(", ")}`)
      .bind(...names)
      .run();
    const alloys = (await env.DB.prepare("SELECT id FROM materials WHERE name LIKE 'Alloy %' ORDER BY name").all<{ id: number }>()).results;
    const { product } = await record();
    const base = `/v1/products/${product}/materials`;
    await expectProblem(
      await send(
        "POST",
        base,
        alice,
        alloys.map((a) => ({ material_id: a.id, quantity: 1 })),
      ),
      409,
      "BOM_FULL",
    );
    expect(
      (
        await send(
          "POST",
          base,
          alice,
          alloys.slice(0, 99).map((a) => ({ material_id: a.id, quantity: 1 })),
        )
      ).status,
    ).toBe(201);
    await expectProblem(await send("POST", `${base}/${alloys[99]!.id}`, alice, { quantity: 1 }), 409, "BOM_FULL");
    expect(((await (await api(base)).json()) as Entry[]).length).toBe(100);
  });

  it("lets only one of two concurrent adds of a material through", async () => {
    const { product } = await record();
    const path = `/v1/products/${product}/materials/${m.tin}`;
    const responses = await Promise.all([send("POST", path, alice, { quantity: 1 }), send("POST", path, alice, { quantity: 2 })]);
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await expectProblem(responses.find((r) => r.status === 409)!, 409, "BOM_ENTRY_EXISTS")).toBeTruthy();
  });
});
