import { beforeAll, describe, expect, it } from "vitest";
import { bearer, bearerLogin, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { productWithComponent } from "../../support/media";
import { bootstrapAdmin } from "../../support/mfa";

// Videos of base products (decisions.md, Media): `{url, title, description, video_metadata}`,
// https links only, at most five per product, never on components. Edits leave the product's
// `version` alone but change its detail read (and so its ETag).

type Video = {
  id: number;
  url: string;
  title: string | null;
  description: string | null;
  video_metadata: Record<string, unknown> | null;
  created_at: string;
};

let alice: string;
let bob: string;

beforeAll(async () => {
  [alice, bob] = [(await verifiedUser("vidalice")).tokens.access_token, (await verifiedUser("vidbob")).tokens.access_token];
});

function send(method: string, path: string, token: string | null, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = token ? bearer(token) : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  return api(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

const videosOf = (product: number) => `/v1/products/${product}/videos`;

async function addVideo(token: string, product: number, body: unknown = { url: "https://video.example/watch?v=1" }): Promise<Video> {
  const response = await send("POST", videosOf(product), token, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Video;
}

async function list(product: number): Promise<Video[]> {
  const response = await api(videosOf(product));
  expect(response.status).toBe(200);
  return (await response.json()) as Video[];
}

async function detail(product: number): Promise<{ etag: string; body: { version: number; videos: Video[] } }> {
  const response = await api(`/v1/products/${product}`);
  expect(response.status).toBe(200);
  return { etag: response.headers.get("etag")!, body: (await response.json()) as { version: number; videos: Video[] } };
}

const pointers = async (response: Response) => (await expectProblem(response, 422, "VALIDATION_FAILED")).errors?.map((e) => e.pointer);

describe("adding a video", () => {
  it("answers 201 with Location and the video", async () => {
    const { product } = await productWithComponent(alice);
    const body = {
      url: "https://video.example/watch?v=teardown",
      title: "Teardown",
      description: "Opening the case",
      video_metadata: { duration_s: 312, codec: "h264", chapters: [0, 60] },
    };
    const response = await send("POST", videosOf(product), alice, body);
    expect(response.status, await response.clone().text()).toBe(201);
    const video = (await response.json()) as Video;
    expect(Object.keys(video).sort()).toEqual(["created_at", "description", "id", "title", "url", "video_metadata"]);
    expect(video).toMatchObject(body);
    expect(video.id).toEqual(expect.any(Number));
    expect(video.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Math.abs(Date.parse(video.created_at) - Date.now())).toBeLessThan(60_000);
    expect(response.headers.get("location")).toBe(`/v1/products/${product}/videos/${video.id}`);

    const read = await api(response.headers.get("location")!);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(video);
  });

  it("takes only the url; the other members default to null", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product, { url: "https://video.example/v/2" });
    expect(video).toMatchObject({ url: "https://video.example/v/2", title: null, description: null, video_metadata: null });
  });

  it("accepts https links only: anything else is 422 at /url", async () => {
    const { product } = await productWithComponent(alice);
    for (const url of [
      "http://video.example/watch?v=1",
      "ftp://video.example/v.mp4",
      "javascript:alert(1)",
      "data:text/html,x",
      "//video.example/v",
      "video.example/v",
      "",
    ]) {
      expect(await pointers(await send("POST", videosOf(product), alice, { url, title: "x" })), url).toEqual(["/url"]);
    }
    expect(await pointers(await send("POST", videosOf(product), alice, { title: "No link" }))).toEqual(["/url"]);
    expect(await pointers(await send("POST", videosOf(product), alice, { url: null }))).toEqual(["/url"]);
    expect(await pointers(await send("POST", videosOf(product), alice, { url: `https://video.example/${"a".repeat(2000)}` }))).toEqual([
      "/url",
    ]);
    expect(await list(product)).toEqual([]);
  });

  it("refuses unknown members and ids in the body with 422", async () => {
    const { product } = await productWithComponent(alice);
    const url = "https://video.example/watch?v=1";
    for (const extra of [{ id: 5 }, { product_id: product }, { created_at: "2020-01-01T00:00:00Z" }, { thumbnail: "x" }]) {
      await expectProblem(await send("POST", videosOf(product), alice, { url, ...extra }), 422, "VALIDATION_FAILED");
    }
    expect(await pointers(await send("POST", videosOf(product), alice, { url, title: "t".repeat(201) }))).toEqual(["/title"]);
    expect(await pointers(await send("POST", videosOf(product), alice, { url, video_metadata: [1, 2] }))).toEqual(["/video_metadata"]);
    expect(await list(product)).toEqual([]);
  });

  it("holds at most five per product: the sixth is 409 VIDEO_LIMIT_REACHED", async () => {
    const { product } = await productWithComponent(alice);
    for (let i = 1; i <= 5; i++) await addVideo(alice, product, { url: `https://video.example/v/${i}` });
    await expectProblem(await send("POST", videosOf(product), alice, { url: "https://video.example/v/6" }), 409, "VIDEO_LIMIT_REACHED");
    expect((await list(product)).map((v) => v.url)).toEqual([1, 2, 3, 4, 5].map((i) => `https://video.example/v/${i}`));
    // Another product is not affected.
    const other = await productWithComponent(alice);
    await addVideo(alice, other.product);
    // Deleting one makes room for one.
    const first = (await list(product))[0]!;
    expect((await send("DELETE", `${videosOf(product)}/${first.id}`, alice)).status).toBe(204);
    await addVideo(alice, product, { url: "https://video.example/v/7" });
    await expectProblem(await send("POST", videosOf(product), alice, { url: "https://video.example/v/8" }), 409, "VIDEO_LIMIT_REACHED");
  });

  it("lets exactly two of three concurrent adds land on a product holding three", async () => {
    const { product } = await productWithComponent(alice);
    for (let i = 1; i <= 3; i++) await addVideo(alice, product, { url: `https://video.example/c/${i}` });
    const responses = await Promise.all(
      [4, 5, 6].map((i) => send("POST", videosOf(product), alice, { url: `https://video.example/c/${i}` })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 409]);
    await expectProblem(responses.find((r) => r.status === 409)!, 409, "VIDEO_LIMIT_REACHED");
    expect(await list(product)).toHaveLength(5);
  });

  it("creates videos nested in a product's create body, counted against the same limit", async () => {
    const videos = [1, 2, 3, 4, 5].map((i) => ({ url: `https://video.example/n/${i}`, title: `Part ${i}` }));
    const created = await postJson("/v1/products", { name: "Filmed kettle", videos }, bearer(alice));
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect((await list(id)).map((v) => v.title)).toEqual(videos.map((v) => v.title));
    await expectProblem(await send("POST", videosOf(id), alice, { url: "https://video.example/n/6" }), 409, "VIDEO_LIMIT_REACHED");
  });
});

describe("reading videos", () => {
  it("lists a product's videos by id, publicly, with an ETag", async () => {
    const { product } = await productWithComponent(alice);
    const added = [];
    for (const title of ["One", "Two", "Three"])
      added.push(await addVideo(alice, product, { url: `https://video.example/${title}`, title }));
    const response = await api(videosOf(product));
    expect(response.status).toBe(200);
    const body = (await response.json()) as Video[];
    expect(body).toEqual(added);
    expect(body.map((v) => v.id)).toEqual([...body.map((v) => v.id)].sort((a, b) => a - b));
    const etag = response.headers.get("etag")!;
    expect(etag).toBeTruthy();
    expect((await api(videosOf(product), { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await api(`${videosOf(product)}/${added[1]!.id}`, { headers: { "if-none-match": etag } })).status).toBe(200);
    // Signed-in readers see the same.
    expect(await (await send("GET", videosOf(product), bob)).json()).toEqual(added);
  });

  it("answers an empty list for a product without videos", async () => {
    const { product } = await productWithComponent(alice);
    expect(await list(product)).toEqual([]);
  });

  it("answers 404 for unknown products, component ids and videos of another product", async () => {
    const { product, component } = await productWithComponent(alice);
    const other = await productWithComponent(bob);
    const video = await addVideo(alice, product);
    await expectProblem(await api("/v1/products/99999999/videos"), 404, "NOT_FOUND");
    await expectProblem(await api(videosOf(component)), 404, "NOT_FOUND");
    await expectProblem(await api(`${videosOf(component)}/${video.id}`), 404, "NOT_FOUND");
    await expectProblem(await api(`${videosOf(other.product)}/${video.id}`), 404, "NOT_FOUND");
    await expectProblem(await api(`${videosOf(product)}/99999999`), 404, "NOT_FOUND");
    await expectProblem(await api(`${videosOf(product)}/abc`), 422, "VALIDATION_FAILED");
  });

  it("embeds the videos in the product's detail read", async () => {
    const { product } = await productWithComponent(alice);
    const one = await addVideo(alice, product, { url: "https://video.example/d/1", title: "First" });
    const two = await addVideo(alice, product, { url: "https://video.example/d/2", video_metadata: { fps: 60 } });
    expect((await detail(product)).body.videos).toEqual([one, two]);
  });
});

describe("changing and deleting videos", () => {
  it("PATCH changes only the members given", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product, {
      url: "https://video.example/p/1",
      title: "Before",
      description: "Kept",
      video_metadata: { fps: 30 },
    });
    const path = `${videosOf(product)}/${video.id}`;

    const titled = await send("PATCH", path, alice, { title: "After" });
    expect(titled.status, await titled.clone().text()).toBe(200);
    expect(await titled.json()).toEqual({ ...video, title: "After" });

    const relinked = await send("PATCH", path, alice, { url: "https://video.example/p/2", video_metadata: { fps: 60 } });
    expect(await relinked.json()).toEqual({ ...video, title: "After", url: "https://video.example/p/2", video_metadata: { fps: 60 } });

    const cleared = await send("PATCH", path, alice, { description: null, video_metadata: null });
    const expected = { ...video, title: "After", url: "https://video.example/p/2", description: null, video_metadata: null };
    expect(await cleared.json()).toEqual(expected);

    const nothing = await send("PATCH", path, alice, {});
    expect(nothing.status).toBe(200);
    expect(await nothing.json()).toEqual(expected);
    expect(await (await api(path)).json()).toEqual(expected);
  });

  it("PATCH validates like POST: https only, no unknown members, url not null", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product);
    const path = `${videosOf(product)}/${video.id}`;
    expect(await pointers(await send("PATCH", path, alice, { url: "http://video.example/x" }))).toEqual(["/url"]);
    expect(await pointers(await send("PATCH", path, alice, { url: null }))).toEqual(["/url"]);
    await expectProblem(await send("PATCH", path, alice, { id: 1 }), 422, "VALIDATION_FAILED");
    await expectProblem(await send("PATCH", path, alice, { views: 3 }), 422, "VALIDATION_FAILED");
    expect(await (await api(path)).json()).toEqual(video);
  });

  it("DELETE answers 204, then the video is gone", async () => {
    const { product } = await productWithComponent(alice);
    const [keep, gone] = [await addVideo(alice, product), await addVideo(alice, product, { url: "https://video.example/gone" })];
    const path = `${videosOf(product)}/${gone.id}`;
    const deleted = await send("DELETE", path, alice);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe("");
    await expectProblem(await api(path), 404, "NOT_FOUND");
    await expectProblem(await send("DELETE", path, alice), 404, "NOT_FOUND");
    await expectProblem(await send("PATCH", path, alice, { title: "Back?" }), 404, "NOT_FOUND");
    expect(await list(product)).toEqual([keep]);
  });

  it("a video is reached only through its own product, even by the owner of both", async () => {
    const first = await productWithComponent(alice);
    const second = await productWithComponent(alice);
    const video = await addVideo(alice, first.product);
    await expectProblem(await send("PATCH", `${videosOf(second.product)}/${video.id}`, alice, { title: "Moved?" }), 404, "NOT_FOUND");
    await expectProblem(await send("DELETE", `${videosOf(second.product)}/${video.id}`, alice), 404, "NOT_FOUND");
    expect(await list(first.product)).toEqual([video]);
  });
});

describe("who may write", () => {
  it("answers 404 to someone else for POST, PATCH and DELETE, and changes nothing", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product);
    const path = `${videosOf(product)}/${video.id}`;
    await expectProblem(await send("POST", videosOf(product), bob, { url: "https://video.example/bob" }), 404, "NOT_FOUND");
    await expectProblem(await send("PATCH", path, bob, { title: "Bob was here" }), 404, "NOT_FOUND");
    await expectProblem(await send("DELETE", path, bob), 404, "NOT_FOUND");
    expect(await list(product)).toEqual([video]);
  });

  it("answers 401 AUTHENTICATION_REQUIRED to anonymous writes", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product);
    const path = `${videosOf(product)}/${video.id}`;
    for (const response of [
      await send("POST", videosOf(product), null, { url: "https://video.example/anon" }),
      await send("PATCH", path, null, { title: "Anonymous" }),
      await send("DELETE", path, null),
    ]) {
      await expectProblem(response, 401, "AUTHENTICATION_REQUIRED");
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    expect(await list(product)).toEqual([video]);
  });

  it("answers 403 EMAIL_NOT_VERIFIED to a signed-in user who has not verified their email", async () => {
    const { product } = await productWithComponent(alice);
    const unverified = (await bearerLogin(await registerUser())).access_token;
    await expectProblem(await send("POST", videosOf(product), unverified, { url: "https://video.example/u" }), 403, "EMAIL_NOT_VERIFIED");
    expect(await list(product)).toEqual([]);
  });

  it("answers 404 for a component id on the product routes, even to its owner", async () => {
    const { product, component } = await productWithComponent(alice);
    const video = await addVideo(alice, product);
    await expectProblem(await send("POST", videosOf(component), alice, { url: "https://video.example/c" }), 404, "NOT_FOUND");
    await expectProblem(await send("PATCH", `${videosOf(component)}/${video.id}`, alice, { title: "x" }), 404, "NOT_FOUND");
    await expectProblem(await send("DELETE", `${videosOf(component)}/${video.id}`, alice), 404, "NOT_FOUND");
    await expectProblem(await send("POST", "/v1/products/99999999/videos", alice, { url: "https://video.example/c" }), 404, "NOT_FOUND");
    expect(await list(product)).toEqual([video]);
  });

  it("POST /v1/components/{id}/videos is always 422 COMPONENT_VIDEOS_NOT_ALLOWED", async () => {
    const { product, component } = await productWithComponent(alice);
    const body = { url: "https://video.example/on-a-component" };
    for (const token of [alice, bob, null]) {
      await expectProblem(await send("POST", `/v1/components/${component}/videos`, token, body), 422, "COMPONENT_VIDEOS_NOT_ALLOWED");
    }
    expect(await list(product)).toEqual([]);
  });
});

describe("moderation", () => {
  it("a superuser with TOTP may correct and delete someone's video, audited, but not add one", async () => {
    const admin = await bootstrapAdmin();
    const token = admin.tokens.access_token;
    const owner = await verifiedUser("vidowner");
    const { product } = await productWithComponent(owner.tokens.access_token);
    const [first, second] = [await addVideo(owner.tokens.access_token, product), await addVideo(owner.tokens.access_token, product)];

    const logs = captureLogs();
    const patched = await send("PATCH", `${videosOf(product)}/${first.id}`, token, { title: "Corrected" });
    const deleted = await send("DELETE", `${videosOf(product)}/${second.id}`, token);
    const added = await send("POST", videosOf(product), token, { url: "https://video.example/admin" });
    logs.restore();

    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(await patched.json()).toEqual({ ...first, title: "Corrected" });
    expect(deleted.status).toBe(204);
    await expectProblem(added, 404, "NOT_FOUND");
    expect(await list(product)).toEqual([{ ...first, title: "Corrected" }]);

    const events = logs.entries().filter((entry) => String(entry.event).startsWith("moderation."));
    expect(events).toEqual([
      expect.objectContaining({
        event: "moderation.record.updated",
        actor_id: admin.id,
        owner_id: owner.id,
        record_kind: "product",
        record_id: product,
      }),
      expect.objectContaining({
        event: "moderation.media.deleted",
        actor_id: admin.id,
        owner_id: owner.id,
        record_kind: "product",
        record_id: product,
      }),
    ]);
  });

  it("an owner's own edits are not audited as moderation", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product);
    const logs = captureLogs();
    expect((await send("PATCH", `${videosOf(product)}/${video.id}`, alice, { title: "Mine" })).status).toBe(200);
    expect((await send("DELETE", `${videosOf(product)}/${video.id}`, alice)).status).toBe(204);
    logs.restore();
    expect(logs.entries().filter((entry) => String(entry.event).startsWith("moderation."))).toEqual([]);
  });
});

describe("the product around its videos", () => {
  it("keeps its version while videos change, but its detail ETag follows them", async () => {
    const { product } = await productWithComponent(alice);
    const before = await detail(product);
    expect(before.body.videos).toEqual([]);

    const video = await addVideo(alice, product);
    const added = await detail(product);
    expect(added.body.version).toBe(before.body.version);
    expect(added.etag).not.toBe(before.etag);
    expect(added.body.videos).toEqual([video]);
    // The old ETag no longer matches.
    expect((await api(`/v1/products/${product}`, { headers: { "if-none-match": before.etag } })).status).toBe(200);
    expect((await api(`/v1/products/${product}`, { headers: { "if-none-match": added.etag } })).status).toBe(304);

    expect((await send("PATCH", `${videosOf(product)}/${video.id}`, alice, { title: "Renamed" })).status).toBe(200);
    const patched = await detail(product);
    expect(patched.body.version).toBe(before.body.version);
    expect(patched.etag).not.toBe(added.etag);
    expect(patched.body.videos).toEqual([{ ...video, title: "Renamed" }]);

    expect((await send("DELETE", `${videosOf(product)}/${video.id}`, alice)).status).toBe(204);
    const deleted = await detail(product);
    expect(deleted.body.version).toBe(before.body.version);
    expect(deleted.etag).not.toBe(patched.etag);
    expect(deleted.body.videos).toEqual([]);

    // Video edits never need the product's If-Match, and its version still guards its own PATCH.
    const rename = await api(`/v1/products/${product}`, {
      method: "PATCH",
      headers: { ...bearer(alice), "content-type": "application/json", "if-match": `"${before.body.version}"` },
      body: JSON.stringify({ name: "Camera body, filmed" }),
    });
    expect(rename.status, await rename.clone().text()).toBe(200);
  });

  it("deleting the product deletes its videos", async () => {
    const { product } = await productWithComponent(alice);
    const video = await addVideo(alice, product);
    expect((await send("DELETE", `/v1/products/${product}`, alice)).status).toBe(204);
    await expectProblem(await api(videosOf(product)), 404, "NOT_FOUND");
    await expectProblem(await api(`${videosOf(product)}/${video.id}`), 404, "NOT_FOUND");
  });
});
