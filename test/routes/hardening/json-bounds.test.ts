import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { encodeJpeg, testPixel } from "../../support/image-fixtures";
import { upload } from "../../support/media";

// Issue 21, finding 7: a video_metadata object nested 10,000 deep (60 KB, under the body limit)
// was stored, and from then on every read of the product failed with 500 (JSON.stringify ran out
// of stack). Free-form JSON members now have bounds (10 levels, 500 keys, 16 KiB) checked at the
// edge, any JSON body is refused past 64 levels before a validator recurses into it, and what is
// already stored reads without 500.

type User = Awaited<ReturnType<typeof verifiedUser>>;
let alice: User;
let auth: Record<string, string>;

beforeAll(async () => {
  alice = await verifiedUser("jsonbounds");
  auth = bearer(alice.tokens.access_token);
});

/** `{"a": {"a": ... 1}}` with `levels` objects. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

/** The same as JSON text, built without recursion so any depth can be sent. */
const nestedText = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"a":1}${"}".repeat(levels - 1)}`;

function send(method: string, path: string, body: string | unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api(path, {
    method,
    headers: { ...auth, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function errorsOf(response: Response) {
  return (await expectProblem(response, 422, "VALIDATION_FAILED")).errors ?? [];
}

async function newProduct(body: Record<string, unknown> = {}): Promise<{ id: number }> {
  const response = await postJson("/v1/products", { name: "Camera", ...body }, auth);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: number };
}

const productCount = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM products WHERE owner_id = ?").bind(alice.id).first<{ n: number }>())!.n;

describe("a free-form JSON member nested 10,000 deep", () => {
  it("is refused with 422 on a product create, nothing is stored, and the product reads stay 200", async () => {
    const before = await productCount();
    const body = `{"name":"Camera","videos":[{"url":"https://video.example/v","video_metadata":${nestedText(10_000)}}]}`;
    expect(body.length).toBeGreaterThan(60_000);
    const refused = await send("POST", "/v1/products", body);
    // Refused at the edge, with the body size: before authentication, so without a round trip.
    expect(roundTrips(refused)).toBe(0);
    const [error] = await errorsOf(refused);
    expect(error!.pointer.startsWith("/videos/0/video_metadata/a/a/")).toBe(true);
    expect(error!.detail).toBe("Nested deeper than 64 levels.");
    expect(await productCount()).toBe(before);
  });

  it("is refused on POST and PATCH of a video; the product's detail and videos keep answering 200", async () => {
    const product = await newProduct({ videos: [{ url: "https://video.example/v", video_metadata: { kind: "teardown" } }] });
    const videos = `/v1/products/${product.id}/videos`;
    const listed = (await (await api(videos)).json()) as { id: number }[];
    await errorsOf(await send("POST", videos, `{"url":"https://video.example/w","video_metadata":${nestedText(10_000)}}`));
    await errorsOf(await send("PATCH", `${videos}/${listed[0]!.id}`, `{"video_metadata":${nestedText(10_000)}}`));
    for (const path of [`/v1/products/${product.id}`, videos, `${videos}/${listed[0]!.id}`]) {
      const response = await api(path);
      expect(response.status, path).toBe(200);
    }
    expect(((await (await api(videos)).json()) as { video_metadata: unknown }[])[0]!.video_metadata).toEqual({ kind: "teardown" });
  });
});

describe("the bounds of free-form JSON", () => {
  it("are 10 levels, 500 keys and 16 KiB, refused at the member", async () => {
    const product = await newProduct();
    const videos = `/v1/products/${product.id}/videos`;
    const url = "https://video.example/bounds";
    const refused = async (video_metadata: unknown) => {
      const response = await postJson(videos, { url, video_metadata }, auth);
      expect(roundTrips(response)).toBe(1); // the access-token check only
      return errorsOf(response);
    };
    expect(await refused(nested(11))).toEqual([{ pointer: "/video_metadata", detail: "Nested deeper than 10 levels." }]);
    expect(await refused({ list: [[[[[[[[[[1]]]]]]]]]] })).toEqual([
      { pointer: "/video_metadata", detail: "Nested deeper than 10 levels." },
    ]);
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(await refused({ a: keys(300), b: keys(200) })).toEqual([{ pointer: "/video_metadata", detail: "More than 500 keys in all." }]);
    expect(await refused({ note: "é".repeat(8_200) })).toEqual([
      { pointer: "/video_metadata", detail: "Larger than 16384 bytes as compact JSON." },
    ]);
    // In a create's list of videos, the pointer names the video.
    const inCreate = await postJson("/v1/products", { name: "Camera", videos: [{ url }, { url, video_metadata: nested(11) }] }, auth);
    expect(await errorsOf(inCreate)).toEqual([{ pointer: "/videos/1/video_metadata", detail: "Nested deeper than 10 levels." }]);

    for (const video_metadata of [nested(10), { a: keys(249), b: keys(249) }, { note: "x".repeat(16_000) }]) {
      const accepted = await postJson(videos, { url, video_metadata }, auth);
      expect(accepted.status, await accepted.clone().text()).toBe(201);
      expect(((await accepted.json()) as { video_metadata: unknown }).video_metadata).toEqual(video_metadata);
      await env.DB.prepare("DELETE FROM videos WHERE product_id = ?").bind(product.id).run();
    }
  });

  it("apply to an image's image_metadata form field", async () => {
    const product = await newProduct();
    const jpeg = { bytes: encodeJpeg(16, 8, testPixel), name: "side.jpg", type: "image/jpeg" };
    const refused = await upload(`/v1/products/${product.id}/images`, alice.tokens.access_token, jpeg, {
      image_metadata: JSON.stringify(nested(11)),
    });
    expect(await errorsOf(refused)).toEqual([{ pointer: "/image_metadata", detail: "Nested deeper than 10 levels." }]);
    const deeper = await upload(`/v1/products/${product.id}/images`, alice.tokens.access_token, jpeg, {
      image_metadata: nestedText(1_600),
    });
    expect(await errorsOf(deeper)).toEqual([{ pointer: "/image_metadata", detail: "Nested deeper than 10 levels." }]);
  });

  it("apply to a camera command's body and params", async () => {
    const commands = `/v1/plugins/rpi-cam/cameras/${crypto.randomUUID()}/commands`;
    expect(await errorsOf(await postJson(commands, { method: "PATCH", path: "/camera/controls", body: nested(11) }, auth))).toEqual([
      { pointer: "/body", detail: "Nested deeper than 10 levels." },
    ]);
    const params = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`p${i}`, i]));
    expect(await errorsOf(await postJson(commands, { method: "GET", path: "/camera", params }, auth))).toEqual([
      { pointer: "/params", detail: "More than 500 keys in all." },
    ]);
    const [deep] = await errorsOf(
      await send("POST", commands, `{"method":"PATCH","path":"/camera/controls","body":${nestedText(10_000)}}`),
    );
    expect(deep!.pointer.startsWith("/body/a/a/")).toBe(true);
  });
});

describe("any JSON body", () => {
  it("nested past 64 levels is 422 before validation recurses into it (components 20,000 deep were a 500)", async () => {
    let components = '{"name":"Leaf","amount_in_parent":1}';
    for (let i = 0; i < 20_000; i++) components = `{"name":"Part","amount_in_parent":1,"components":[${components}]}`;
    const [error] = await errorsOf(await send("POST", "/v1/products", `{"name":"Tower","components":[${components}]}`));
    expect(error!.pointer.startsWith("/components/0/components/0/components/0/")).toBe(true);
    expect(error!.detail).toBe("Nested deeper than 64 levels.");
    // Within 64 levels the rules of the route answer as before: too deep for a component tree is 400.
    const eleven = (levels: number): Record<string, unknown> =>
      levels === 0 ? { name: "Leaf", amount_in_parent: 1 } : { name: "Part", amount_in_parent: 1, components: [eleven(levels - 1)] };
    await expectProblem(await postJson("/v1/products", { name: "Tower", components: [eleven(11)] }, auth), 400, "COMPONENT_TOO_DEEP");
  });

  it("that is not JSON is still 400 MALFORMED_JSON, however deep its brackets go", async () => {
    await expectProblem(await send("POST", "/v1/products", `{"name":${"[".repeat(100)}`), 400, "MALFORMED_JSON");
  });
});

describe("JSON stored before the bounds", () => {
  it("never makes a read fail: too deep or not an object reads as null", async () => {
    const product = await newProduct();
    // The circularity notes are written by the service alone; a read must not fail on them either.
    await env.DB.prepare("UPDATE products SET circularity_properties = '{broken' WHERE id = ?").bind(product.id).run();
    const insert = env.DB.prepare(
      "INSERT INTO videos (product_id, url, title, video_metadata, created_at, updated_at) VALUES (?, ?, ?, ?, 0, 0)",
    );
    await env.DB.batch([
      insert.bind(product.id, "https://video.example/deep", "deep", nestedText(10_000)),
      insert.bind(product.id, "https://video.example/broken", "broken", "{not json"),
      insert.bind(product.id, "https://video.example/array", "array", "[1, 2]"),
      insert.bind(product.id, "https://video.example/fine", "fine", JSON.stringify(nested(30))),
    ]);
    const imageId = crypto.randomUUID().replaceAll("-", "");
    await env.DB.prepare(
      `INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, width, height, image_metadata, created_at, updated_at)
       VALUES (?, ?, ?, 'old.jpg', 'image/jpeg', 10, 'clean', 1, 1, ?, 0, 0)`,
    )
      .bind(imageId, product.id, `${imageId}.jpg`, nestedText(10_000))
      .run();

    const metadata = (videos: { title: string; video_metadata: unknown }[]) =>
      Object.fromEntries(videos.map((v) => [v.title, v.video_metadata]));
    const expected = { deep: null, broken: null, array: null, fine: nested(30) };

    const detail = await api(`/v1/products/${product.id}`);
    expect(detail.status).toBe(200);
    const body = (await detail.json()) as {
      circularity_properties: unknown;
      videos: { title: string; video_metadata: unknown }[];
      images: { image_metadata: unknown }[];
    };
    expect(body.circularity_properties).toBeNull();
    expect(metadata(body.videos)).toEqual(expected);
    expect(body.images.map((image) => image.image_metadata)).toEqual([null]);

    const videos = await api(`/v1/products/${product.id}/videos`);
    expect(videos.status).toBe(200);
    expect(metadata((await videos.json()) as { title: string; video_metadata: unknown }[])).toEqual(expected);

    const images = await api(`/v1/products/${product.id}/images`);
    expect(images.status).toBe(200);
    expect(((await images.json()) as { items: { image_metadata: unknown }[] }).items.map((image) => image.image_metadata)).toEqual([null]);

    const exported = await api(`/v1/products/${product.id}/export?format=json`);
    expect(exported.status).toBe(200);
    const exportedText = await exported.text();
    expect(exportedText).toContain('"video_metadata":null');
    expect(exportedText).not.toContain(
      '"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":',
    );
  });
});
