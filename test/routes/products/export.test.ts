import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { EXPORT_CHUNK_PRODUCTS } from "../../../src/services/products/export";
import { bearer, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { csvRecords, parseCsv } from "../../support/csv";
import { api, expectProblem, ORIGIN, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";

// Storage is per test file, so the list export sees this file's products only; brands carry a tag anyway.
const tag = `x${Date.now().toString(36)}`;
const COLUMNS = [
  "id",
  "parent_id",
  "amount_in_parent",
  "owner_username",
  "name",
  "description",
  "brand",
  "model",
  "product_type_id",
  "product_type_name",
  "weight_g",
  "height_cm",
  "width_cm",
  "depth_cm",
  "volume_cm3",
  "circularity_properties",
  "created_at",
  "updated_at",
  "image_urls",
];

type User = Awaited<ReturnType<typeof verifiedUser>>;
let alice: User;
let bob: User;
let typeId: number;
/** Alice's kettle: ids of the base product and its components, in creation order. */
const kettle = { id: 0, element: 0, coil: 0, wire: 0, lid: 0 };
let bobsFan = 0;

interface Created {
  id: number;
  components: { id: number; name: string }[];
}

async function create(token: string, body: Record<string, unknown>): Promise<Created> {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Created;
}

async function componentsOf(id: number): Promise<{ id: number; name: string }[]> {
  const response = await api(`/v1/components/${id}`);
  return ((await response.json()) as Created).components;
}

let imageClock = 0;

/** Uploads arrive with the media routes; until then the image rows are written as the upload will write them. */
async function addImage(productId: number, key: string, status: "clean" | "pending" = "clean"): Promise<void> {
  await env.DB.prepare(
    "INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, width, height, status, created_at) VALUES (?, ?, ?, ?, 'image/jpeg', 10, 4, 3, ?, ?)",
  )
    // One second apart, so "oldest first" has a single answer.
    .bind(crypto.randomUUID().replaceAll("-", ""), productId, key, `${key}.jpg`, status, 1_780_000_000 + imageClock++)
    .run();
}

async function text(response: Response): Promise<string> {
  expect(response.status, response.status === 200 ? "" : await response.clone().text()).toBe(200);
  // Keep the BOM: it is part of what is checked.
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(await response.arrayBuffer());
}

beforeAll(async () => {
  [alice, bob] = [await verifiedUser("alice"), await verifiedUser("bob")];
  expect((await patchMe(bob.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
  typeId = (await env.DB.prepare("INSERT INTO product_types (name) VALUES (?) RETURNING id").bind(`Kettle ${tag}`).first<{ id: number }>())!
    .id;
  const material = await env.DB.prepare("INSERT INTO materials (name) VALUES (?) RETURNING id")
    .bind(`Steel ${tag}`)
    .first<{ id: number }>();

  const created = await create(alice.tokens.access_token, {
    name: 'Kettle, "the" best',
    description: '=HYPERLINK("http://evil")\nsecond line',
    brand: `${tag}acme`,
    model: "@K1",
    product_type_id: typeId,
    weight_g: 1200.5,
    height_cm: 20,
    width_cm: 15,
    depth_cm: 10,
    circularity_properties: { recyclability: "Steel body, easy to separate" },
    bill_of_materials: [{ material_id: material!.id, quantity: 0.8, unit: "kg" }],
    videos: [{ url: "https://video.example/teardown", title: "Teardown" }],
    components: [
      {
        name: "Heating element",
        amount_in_parent: 1,
        description: "+5V rail",
        components: [
          { name: "Coil", amount_in_parent: 2, description: "-40 °C rated" },
          { name: "Wire", amount_in_parent: 3, description: "\tindented" },
        ],
      },
      { name: "Lid", amount_in_parent: 1 },
    ],
  });
  kettle.id = created.id;
  [kettle.element, kettle.lid] = created.components.map((c) => c.id) as [number, number];
  [kettle.coil, kettle.wire] = (await componentsOf(kettle.element)).map((c) => c.id) as [number, number];
  await addImage(kettle.id, `${tag}-front`);
  await addImage(kettle.id, `${tag}-back`);
  await addImage(kettle.id, `${tag}-unscanned`, "pending");
  await addImage(kettle.coil, `${tag}-coil`);

  bobsFan = (
    await create(bob.tokens.access_token, { name: "Desk fan", brand: `${tag}bolt`, components: [{ name: "Motor", amount_in_parent: 1 }] })
  ).id;
});

const ours = `brand[in]=${tag}acme,${tag}bolt`;

describe("CSV export", () => {
  it("streams a BOM, the 19 columns in order and one row per record, depth first, with headers for a download", async () => {
    const response = await api(`/v1/products/export?${ours}&order_by=brand`);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="relab-products-\d{8}T\d{6}Z\.csv"$/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await text(response);
    expect(body.startsWith("\uFEFFid,parent_id,amount_in_parent,")).toBe(true);
    const [header] = parseCsv(body);
    expect(header).toEqual(COLUMNS);
    const rows = csvRecords(body);
    // Depth first: the kettle, the element with its coil and wire, the lid; then Bob's fan and its motor.
    expect(rows.map((r) => [r.id, r.parent_id, r.amount_in_parent])).toEqual([
      [String(kettle.id), "", ""],
      [String(kettle.element), String(kettle.id), "1"],
      [String(kettle.coil), String(kettle.element), "2"],
      [String(kettle.wire), String(kettle.element), "3"],
      [String(kettle.lid), String(kettle.id), "1"],
      [String(bobsFan), "", ""],
      [String(bobsFan + 1), String(bobsFan), "1"],
    ]);
  });

  it("writes each field exactly: quoting, the formula guard, compact JSON, absolute image URLs, ISO times", async () => {
    const body = await text(await api(`/v1/products/${kettle.id}/export`));
    // Commas and quotes are quoted with inner quotes doubled; a line break stays inside its quoted cell.
    expect(body).toContain(`,"Kettle, ""the"" best",`);
    expect(body).toContain(`"'=HYPERLINK(""http://evil"")\nsecond line"`);
    const [root, element, coil, wire] = csvRecords(body);
    expect(root).toMatchObject({
      owner_username: alice.username,
      name: 'Kettle, "the" best',
      description: '\'=HYPERLINK("http://evil")\nsecond line',
      brand: `${tag}acme`,
      model: "'@K1",
      product_type_id: String(typeId),
      product_type_name: `Kettle ${tag}`,
      weight_g: "1200.5",
      height_cm: "20",
      width_cm: "15",
      depth_cm: "10",
      volume_cm3: "3000",
      circularity_properties: '{"recyclability":"Steel body, easy to separate","disassemblability":null,"remanufacturability":null}',
      // Scanned images only, oldest first, separated by one space.
      image_urls: `${ORIGIN}/uploads/images/${tag}-front ${ORIGIN}/uploads/images/${tag}-back`,
    });
    expect(root!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(root!.updated_at).toBe(root!.created_at);
    expect(element).toMatchObject({ description: "'+5V rail", image_urls: "", circularity_properties: "", weight_g: "", volume_cm3: "" });
    expect(coil).toMatchObject({ description: "'-40 °C rated", image_urls: `${ORIGIN}/uploads/images/${tag}-coil` });
    expect(wire).toMatchObject({ description: "'\tindented" });
  });

  it("leaves the owner empty where the owner's profile is hidden from the viewer", async () => {
    const anonymous = csvRecords(await text(await api(`/v1/products/export?${ours}`)));
    expect(anonymous.filter((r) => r.brand === `${tag}bolt` || r.name === "Motor").map((r) => r.owner_username)).toEqual(["", ""]);
    expect(anonymous.find((r) => r.id === String(kettle.id))!.owner_username).toBe(alice.username);
    const own = csvRecords(await text(await api(`/v1/products/${bobsFan}/export`, { headers: bearer(bob.tokens.access_token) })));
    expect(own.map((r) => r.owner_username)).toEqual([bob.username, bob.username]);
    const other = csvRecords(await text(await api(`/v1/products/${bobsFan}/export`, { headers: bearer(alice.tokens.access_token) })));
    expect(other.map((r) => r.owner_username)).toEqual(["", ""]);
  });

  it("applies the list's filters, search and order", async () => {
    const ids = async (query: string, token?: string) =>
      csvRecords(await text(await api(`/v1/products/export?${query}`, token ? { headers: bearer(token) } : {})))
        .filter((r) => r.parent_id === "")
        .map((r) => Number(r.id));
    expect(await ids(`brand[in]=${tag}bolt`)).toEqual([bobsFan]);
    expect(await ids(`${ours}&search=kettle`)).toEqual([kettle.id]);
    expect(await ids(`${ours}&owner=me`, bob.tokens.access_token)).toEqual([bobsFan]);
    expect(await ids(`${ours}&order_by=-brand`)).toEqual([bobsFan, kettle.id]);
    expect(await ids(`${ours}&product_type_name[in]=${encodeURIComponent(`KETTLE ${tag}`)}`)).toEqual([kettle.id]);
    expect(await ids(`brand[in]=${tag}nobody`)).toEqual([]);
  });

  it("is a header alone when nothing matches", async () => {
    const body = await text(await api(`/v1/products/export?brand[in]=${tag}nobody`));
    expect(body).toBe(`\uFEFF${COLUMNS.join(",")}\r\n`);
  });
});

describe("JSON export", () => {
  it("lists products in the shape of the product read, components nested at every level with their embeds", async () => {
    const response = await api(`/v1/products/export?format=json&${ours}&order_by=brand`);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="relab-products-\d{8}T\d{6}Z\.json"$/);
    const products = JSON.parse(await text(response)) as Record<string, unknown>[];
    expect(products.map((p) => p.id)).toEqual([kettle.id, bobsFan]);

    const read = (await (await api(`/v1/products/${kettle.id}`)).json()) as Record<string, unknown>;
    const exported = products[0]!;
    // Every member of the read, with the same values, except that components are full records here.
    expect(Object.keys(exported)).toEqual(Object.keys(read));
    expect({ ...exported, components: null }).toEqual({ ...read, components: null });
    expect(exported.images).toHaveLength(2);
    expect(exported.bill_of_materials).toEqual([expect.objectContaining({ quantity: 0.8, unit: "kg" })]);
    expect(exported.videos).toEqual([expect.objectContaining({ url: "https://video.example/teardown", title: "Teardown" })]);

    const [element, lid] = exported.components as Record<string, unknown>[];
    const elementRead = (await (await api(`/v1/components/${kettle.element}`)).json()) as Record<string, unknown>;
    expect(Object.keys(element!)).toEqual(Object.keys(elementRead));
    expect({ ...element, components: null }).toEqual({ ...elementRead, components: null });
    const [coil, wire] = element!.components as Record<string, unknown>[];
    expect([coil!.id, wire!.id, lid!.id]).toEqual([kettle.coil, kettle.wire, kettle.lid]);
    expect(coil).toMatchObject({
      parent_id: kettle.element,
      components: [],
      images: [expect.objectContaining({ image_url: `${ORIGIN}/uploads/images/${tag}-coil` })],
    });

    // Bob's profile is private: hidden here as in the read.
    expect(products[1]).toMatchObject({ owner_id: null, owner_username: null });
  });

  it("exports one product as a one-item list", async () => {
    const response = await api(`/v1/products/${bobsFan}/export?format=json`, { headers: bearer(bob.tokens.access_token) });
    expect(response.headers.get("content-disposition")).toMatch(
      new RegExp(`^attachment; filename="relab-product-${bobsFan}-\\d{8}T\\d{6}Z\\.json"$`),
    );
    const products = JSON.parse(await text(response)) as Record<string, unknown>[];
    expect(products).toHaveLength(1);
    expect(products[0]).toMatchObject({
      id: bobsFan,
      owner_username: bob.username,
      components: [expect.objectContaining({ name: "Motor", components: [] })],
    });
  });
});

describe("export requests", () => {
  it("answers 404 for a component id or an unknown id, in one round trip", async () => {
    const component = await api(`/v1/products/${kettle.element}/export`);
    expect(roundTrips(component)).toBe(1);
    await expectProblem(component, 404, "NOT_FOUND");
    await expectProblem(await api("/v1/products/999999/export?format=json"), 404, "NOT_FOUND");
  });

  it("reads a single product with everything below it in one round trip", async () => {
    const response = await api(`/v1/products/${kettle.id}/export?format=json`);
    expect(roundTrips(response)).toBe(1);
    await response.arrayBuffer();
  });

  it("refuses an unknown format, paging and unknown parameters with 422", async () => {
    for (const [path, pointer] of [
      ["/v1/products/export?format=xml", "#/query/format"],
      [`/v1/products/${kettle.id}/export?format=xlsx`, "#/query/format"],
      ["/v1/products/export?page=2", "#/query/page"],
      [`/v1/products/${kettle.id}/export?brand[in]=x`, "#/query/brand[in]"],
    ] as const) {
      const problem = await expectProblem(await api(path), 422, "VALIDATION_FAILED");
      expect(problem.errors).toEqual([expect.objectContaining({ pointer })]);
    }
  });

  it("needs a signed-in user for owner=me", async () => {
    await expectProblem(await api("/v1/products/export?owner=me"), 401, "AUTHENTICATION_REQUIRED");
  });
});

describe("signed-in exports", () => {
  const exports = [
    ["list, CSV", () => `/v1/products/export?${ours}`],
    ["list, JSON", () => `/v1/products/export?${ours}&format=json`],
    ["one product, CSV", () => `/v1/products/${bobsFan}/export`],
    ["one product, JSON", () => `/v1/products/${bobsFan}/export?format=json`],
  ] as const;

  /** The owner names an export shows, base products and components alike, whatever its format. */
  async function ownersShown(response: Response): Promise<string[]> {
    const body = await text(response);
    if (!(response.headers.get("content-type") ?? "").startsWith("application/json")) {
      return csvRecords(body).map((r) => r.owner_username!);
    }
    type Item = { owner_username: string | null; components: Item[] };
    const walk = (items: Item[]): string[] => items.flatMap((item) => [item.owner_username ?? "", ...walk(item.components)]);
    return walk(JSON.parse(body.replace(/^\uFEFF/, "")) as Item[]);
  }

  it.each(exports)("costs one D1 round trip before it streams, anonymous or signed in (%s)", async (_, path) => {
    const anonymous = await api(path());
    const signedIn = await api(path(), { headers: bearer(bob.tokens.access_token) });
    // Bodies first: a stream left unread would hold the runtime when an assertion fails.
    const [shownAnonymous, shownSignedIn] = [await ownersShown(anonymous), await ownersShown(signedIn)];
    expect([roundTrips(anonymous), roundTrips(signedIn)]).toEqual([1, 1]);
    // Bob's profile is private: his own export names him, the anonymous one does not.
    expect(shownSignedIn.filter((name) => name === bob.username)).toHaveLength(2);
    expect(shownAnonymous).not.toContain(bob.username);
  });

  it("reads owner=me as the account the token names, in one round trip", async () => {
    const response = await api(`/v1/products/export?${ours}&owner=me&format=json`, { headers: bearer(bob.tokens.access_token) });
    const products = JSON.parse(await text(response)) as { id: number; owner_username: string | null }[];
    expect(roundTrips(response)).toBe(1);
    expect(products.map((p) => [p.id, p.owner_username])).toEqual([[bobsFan, bob.username]]);
  });

  it("reads a revoked token as anonymous, and refuses it owner=me, in one round trip", async () => {
    const carol = await verifiedUser("carol");
    expect((await patchMe(carol.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const lamp = await create(carol.tokens.access_token, {
      name: "Lamp",
      brand: `${tag}carol`,
      components: [{ name: "Bulb", amount_in_parent: 1 }],
    });
    const paths = [`/v1/products/export?brand[in]=${tag}carol`, `/v1/products/${lamp.id}/export?format=json`];
    for (const path of paths) {
      expect(await ownersShown(await api(path, { headers: bearer(carol.tokens.access_token) }))).toEqual([carol.username, carol.username]);
    }
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(carol.tokens.access_token) })).status).toBe(204);

    for (const path of paths) {
      const revoked = await api(path, { headers: bearer(carol.tokens.access_token) });
      // What an anonymous caller sees: the private owner is hidden.
      expect(await ownersShown(revoked)).toEqual(["", ""]);
      expect(roundTrips(revoked)).toBe(1);
    }
    const mine = await api(`/v1/products/export?brand[in]=${tag}carol&owner=me`, { headers: bearer(carol.tokens.access_token) });
    await expectProblem(mine, 401, "AUTHENTICATION_REQUIRED");
    expect(roundTrips(mine)).toBe(1);
  });

  it("shows a superuser with TOTP every owner, in one round trip", async () => {
    const admin = await bootstrapAdmin();
    for (const [, path] of exports) {
      const response = await api(path(), { headers: bearer(admin.tokens.access_token) });
      expect((await ownersShown(response)).filter((name) => name === bob.username)).toHaveLength(2);
      expect(roundTrips(response)).toBe(1);
    }
  });
});

describe("an export larger than a chunk and than any page", () => {
  const bulkBrand = `${tag}bulk`;
  const count = EXPORT_CHUNK_PRODUCTS + 30;
  const created: number[] = [];

  beforeAll(async () => {
    for (let i = 0; i < count; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, count - i) }, (_, j) =>
          create(alice.tokens.access_token, {
            name: `Bulk ${String(i + j).padStart(3, "0")}`,
            brand: bulkBrand,
            components: [{ name: "Part", amount_in_parent: 1 }],
          }),
        ),
      );
      created.push(...batch.map((p) => p.id));
    }
  });

  it("returns every match once, in the list's order, reading one chunk per round trip", async () => {
    const logs = captureLogs();
    try {
      const rows = csvRecords(await text(await api(`/v1/products/export?brand[in]=${bulkBrand}&order_by=-name`)));
      expect(rows).toHaveLength(count * 2);
      const roots = rows.filter((r) => r.parent_id === "").map((r) => Number(r.id));
      const pages = await Promise.all(
        [1, 2].map(async (page) => {
          const response = await api(`/v1/products?brand[in]=${bulkBrand}&order_by=-name&size=100&page=${page}`);
          return ((await response.json()) as { items: { id: number }[] }).items.map((p) => p.id);
        }),
      );
      expect(roots).toEqual(pages.flat());
      expect(new Set(roots)).toEqual(new Set(created));
      const ended = logs.entries().find((entry) => entry.msg === "export ended");
      expect(ended).toMatchObject({ outcome: "complete", format: "csv", records: count * 2, chunks: 2, d1_round_trips: 2 });
    } finally {
      logs.restore();
    }
  });

  it("stops reading when the client goes away mid-stream, and the Worker keeps serving", async () => {
    const logs = captureLogs();
    try {
      const response = await api(`/v1/products/export?brand[in]=${bulkBrand}&format=json`);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(first.done).toBe(false);
      await reader.cancel();
      await expect.poll(() => logs.entries().find((entry) => entry.msg === "export ended")).toMatchObject({ outcome: "cancelled" });
      const ended = logs.entries().find((entry) => entry.msg === "export ended")!;
      // The second chunk was never read.
      expect(ended.d1_round_trips).toBeLessThan(2);
      expect((await api("/v1/products?size=1")).status).toBe(200);
      // Read to its end: an export left unread keeps its stream open, and the test run with it.
      const after = await api(`/v1/products/${kettle.id}/export`);
      expect(after.status).toBe(200);
      await after.arrayBuffer();
    } finally {
      logs.restore();
    }
  });

  it("reads every chunk signed in with the round trips of an anonymous export (the token check rides in the first)", async () => {
    const logs = captureLogs();
    try {
      const body = await text(
        await api(`/v1/products/export?brand[in]=${bulkBrand}&format=json`, { headers: bearer(alice.tokens.access_token) }),
      );
      expect(JSON.parse(body)).toHaveLength(count);
      const ended = logs.entries().find((entry) => entry.msg === "export ended");
      expect(ended).toMatchObject({ outcome: "complete", format: "json", chunks: 2, d1_round_trips: 2 });
    } finally {
      logs.restore();
    }
  });
});
