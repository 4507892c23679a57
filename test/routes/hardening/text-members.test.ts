import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { claim, pairingCode } from "../../support/camera";
import { api, expectProblem, roundTrips } from "../../support/http";
import { encodeJpeg, testPixel } from "../../support/image-fixtures";
import { upload } from "../../support/media";
import { asAdmin, pointers } from "../../support/reference";

// decisions.md, "Added in the second round": text members refuse NUL and the other C0 control
// characters with 422 at the member; tab, LF and CR pass in multi-line text. Issue 21, finding 1:
// a NUL in a product name was stored past validation until SQLite's length() stopped at it and
// the CHECK constraint answered 500.

type User = Awaited<ReturnType<typeof verifiedUser>>;
let alice: User;
let auth: Record<string, string>;

beforeAll(async () => {
  alice = await verifiedUser("textmembers");
  auth = bearer(alice.tokens.access_token);
});

const create = (body: unknown, headers: Record<string, string> = {}) => postJson("/v1/products", body, { ...auth, ...headers });

async function created(body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await create(body);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Record<string, any>;
}

function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api(path, { method, headers: { ...auth, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

const ownProducts = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM products WHERE owner_id = ?").bind(alice.id).first<{ n: number }>())!.n;

describe("a NUL in a record's text", () => {
  it("is 422 at the member for a create, wherever the NUL sits, and nothing is stored", async () => {
    const before = await ownProducts();
    const refused = await create({ name: "\u0000ab" });
    // Only the access-token check: the body is refused before any write is tried.
    expect(roundTrips(refused)).toBe(1);
    expect(await pointers(refused)).toEqual(["/name"]);
    expect(await pointers(await create({ name: "a\u0000bc" }))).toEqual(["/name"]);
    expect(await pointers(await create({ name: "Kettle", brand: "ac\u0000me", model: "\u0000", description: "x\u0000" }))).toEqual([
      "/description",
      "/brand",
      "/model",
    ]);
    const nested = {
      name: "Kettle",
      components: [{ name: "Lid", amount_in_parent: 1, components: [{ name: "Kn\u0000ob", amount_in_parent: 1 }] }],
    };
    expect(await pointers(await create(nested))).toEqual(["/components/0/components/0/name"]);
    expect(await ownProducts()).toBe(before);
  });

  it("is 422 at the member for a component create and for PATCH of products and components", async () => {
    const product = await created({ name: "Toaster", components: [{ name: "Slot", amount_in_parent: 2 }] });
    const component = product.components[0];
    expect(
      await pointers(await postJson(`/v1/products/${product.id}/components`, { name: "a\u0000bc", amount_in_parent: 1 }, auth)),
    ).toEqual(["/name"]);
    expect(await pointers(await send("PATCH", `/v1/products/${product.id}`, { name: "\u0000ab" }, { "if-match": '"1"' }))).toEqual([
      "/name",
    ]);
    expect(await pointers(await send("PATCH", `/v1/components/${component.id}`, { model: "x\u0000y" }, { "if-match": '"1"' }))).toEqual([
      "/model",
    ]);
    const stored = await env.DB.prepare("SELECT name, model FROM products WHERE id IN (?, ?) ORDER BY id")
      .bind(product.id, component.id)
      .all();
    expect(stored.results).toEqual([
      { name: "Toaster", model: null },
      { name: "Slot", model: null },
    ]);
  });

  it("with an Idempotency-Key: the same 422 on every retry, and the key stays free for the corrected request", async () => {
    const key = crypto.randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await create({ name: "\u0000ab" }, { "idempotency-key": key });
      expect((await expectProblem(refused, 422, "VALIDATION_FAILED")).errors).toEqual([
        { pointer: "/name", detail: expect.stringMatching(/control characters/) },
      ]);
    }
    const corrected = await create({ name: "ab" }, { "idempotency-key": key });
    expect(corrected.status, await corrected.clone().text()).toBe(201);
  });
});

describe("which control characters", () => {
  it("passes tab, LF and CR in descriptions and notes, and stores them as sent", async () => {
    const description = "Line one\r\n\tLine two\nLine three";
    const product = await created({ name: "Kettle", description, circularity_properties: { recyclability: "PP body\n\tsteel base" } });
    expect(product.description).toBe(description);
    expect(product.circularity_properties.recyclability).toBe("PP body\n\tsteel base");
    const stored = await env.DB.prepare("SELECT description FROM products WHERE id = ?").bind(product.id).first<{ description: string }>();
    expect(stored!.description).toBe(description);
  });

  it("refuses every other C0 character in multi-line text, and any of them (tab and LF too) in one-line text", async () => {
    for (const character of ["\u0001", "\u0007", "\u000b", "\u000c", "\u001b", "\u001f"]) {
      expect(await pointers(await create({ name: "Kettle", description: `a${character}b` }))).toEqual(["/description"]);
      expect(await pointers(await create({ name: "Kettle", circularity_properties: { disassemblability: `a${character}b` } }))).toEqual([
        "/circularity_properties/disassemblability",
      ]);
    }
    for (const character of ["\t", "\n", "\r", "\u0000", "\u001f"]) {
      expect(await pointers(await create({ name: `Ket${character}tle` }))).toEqual(["/name"]);
      expect(await pointers(await create({ name: "Kettle", brand: `a${character}b` }))).toEqual(["/brand"]);
    }
    // DEL and the characters above the C0 range are text.
    expect((await created({ name: "Kettle\u007f\u0085\u00e9" })).name).toBe("Kettle\u007f\u0085\u00e9");
  });

  it("refuses an unpaired surrogate (D1 could only store U+FFFD for it); a pair is one character", async () => {
    expect(await pointers(await create({ name: "ab\ud800" }))).toEqual(["/name"]);
    expect(await pointers(await create({ name: "ab", description: "\udc00x" }))).toEqual(["/description"]);
    expect((await created({ name: "ab\ud83d\ude00" })).name).toBe("ab😀");
  });
});

describe("every other text member", () => {
  it("videos: title, description and url", async () => {
    const product = await created({ name: "Blender" });
    const videos = `/v1/products/${product.id}/videos`;
    expect(await pointers(await postJson(videos, { url: "https://video.example/a", title: "Tear\u0000down" }, auth))).toEqual(["/title"]);
    expect(await pointers(await postJson(videos, { url: "https://video.example/a\u0000b" }, auth))).toEqual(["/url"]);
    const video = (await (await postJson(videos, { url: "https://video.example/a", description: "Part 1\n\tOpening" }, auth)).json()) as {
      id: number;
    };
    expect(await pointers(await send("PATCH", `${videos}/${video.id}`, { description: "\u0001" }))).toEqual(["/description"]);
    expect(await pointers(await create({ name: "Mixer", videos: [{ url: "https://video.example/b", title: "x\u0000" }] }))).toEqual([
      "/videos/0/title",
    ]);
  });

  it("reference data written by an administrator", async () => {
    expect(await pointers(await asAdmin("POST", "/v1/admin/materials", { name: "Steel\u0000" }))).toEqual(["/name"]);
    expect(await pointers(await asAdmin("POST", "/v1/admin/product-types", { name: "Phone", description: "\u0000" }))).toEqual([
      "/description",
    ]);
    expect(
      await pointers(await asAdmin("POST", "/v1/admin/taxonomies", { name: "WEEE", version: "1\u0000", domains: ["products"] })),
    ).toEqual(["/version"]);
    const taxonomy = (await (
      await asAdmin("POST", "/v1/admin/taxonomies", { name: "WEEE", version: "1", domains: ["products"] })
    ).json()) as { id: number };
    expect(
      await pointers(
        await asAdmin("POST", "/v1/admin/categories", {
          name: "Lamps",
          external_id: "L\u0000",
          description: "\u001b[31m",
          taxonomy_id: taxonomy.id,
        }),
      ),
    ).toEqual(["/description", "/external_id"]);
  });

  it("cameras and their commands", async () => {
    expect(await pointers(await claim(alice.tokens.access_token, pairingCode(), "Bench\u0000cam"))).toEqual(["/camera_name"]);
    const commands = `/v1/plugins/rpi-cam/cameras/${crypto.randomUUID()}/commands`;
    expect(await pointers(await postJson(commands, { method: "GET", path: "/camera\u0000" }, auth))).toEqual(["/path"]);
    expect(await pointers(await postJson(commands, { method: "GET", path: "/camera", params: { mode: "a\u0000" } }, auth))).toEqual([
      "/params/mode",
    ]);
    const captures = `/v1/plugins/rpi-cam/cameras/${crypto.randomUUID()}/captures`;
    expect(await pointers(await postJson(captures, { product_id: 1, description: "top\u0000" }, auth))).toEqual(["/description"]);
  });

  it("the description field of an image upload", async () => {
    const product = await created({ name: "Radio" });
    const jpeg = { bytes: encodeJpeg(16, 8, testPixel), name: "front.jpg", type: "image/jpeg" };
    const refused = await upload(`/v1/products/${product.id}/images`, alice.tokens.access_token, jpeg, { description: "front\u0000" });
    expect(await pointers(refused)).toEqual(["/description"]);
    const accepted = await upload(`/v1/products/${product.id}/images`, alice.tokens.access_token, jpeg, {
      description: "front\r\nlid off",
    });
    expect(accepted.status, await accepted.clone().text()).toBe(201);
  });

  it("an upload's description counts characters, as every text member does (found by the fuzz test)", async () => {
    // 500 characters, 501 UTF-16 code units: a camera capture took it, the upload it asks for did not.
    const product = await created({ name: "Toaster" });
    const jpeg = { bytes: encodeJpeg(16, 8, testPixel), name: "top.jpg", type: "image/jpeg" };
    const longest = `${"é".repeat(496)}🧪ééé`;
    const accepted = await upload(`/v1/products/${product.id}/images`, alice.tokens.access_token, jpeg, { description: longest });
    expect(accepted.status, await accepted.clone().text()).toBe(201);
    expect(((await accepted.json()) as { description: string }).description).toBe(longest);
    const refused = await upload(`/v1/products/${product.id}/images`, alice.tokens.access_token, jpeg, { description: `${longest}é` });
    expect(await pointers(refused)).toEqual(["/description"]);
  });

  it("text in query parameters: 422 at the parameter", async () => {
    expect(await pointers(await api("/v1/products?name[ilike]=a%00b"))).toEqual(["#/query/name[ilike]"]);
    expect(await pointers(await api("/v1/products?search=fair%01phone"))).toEqual(["#/query/search"]);
    expect(await pointers(await api("/v1/products?brand[in]=acme,a%00b"))).toEqual(["#/query/brand[in]"]);
    expect(await pointers(await api("/v1/products/suggestions/brands?search=%00"))).toEqual(["#/query/search"]);
    expect(await pointers(await api("/v1/materials?name[ilike]=%0A"))).toEqual(["#/query/name[ilike]"]);
    expect(await pointers(await asAdmin("GET", "/v1/admin/users?search=ad%00"))).toEqual(["#/query/search"]);
  });
});
