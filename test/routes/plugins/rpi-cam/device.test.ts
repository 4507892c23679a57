import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, me, verifiedUser } from "../../../support/accounts";
import { assertion, cameraApi, handshake, openTunnel, pairCamera, type RequestFrame, type TestCamera } from "../../../support/camera";
import { api, expectProblem, roundTrips } from "../../../support/http";
import { encodeJpeg, jpegWithMetadata, SECRETS } from "../../../support/image-fixtures";
import { contains } from "../../../support/image-fixtures-inspect";
import { pathOf, productWithComponent, scan } from "../../../support/media";

// The device's callbacks and the capture round trip (decisions.md, Camera plugin, Device upload):
// the app asks for a capture, the device takes it and uploads it over HTTP with its assertion
// (the bytes never travel through the tunnel), the image goes through the media pipeline
// (sanitised, scanned, charged to the camera owner's quota), and the app gets the image record.

let alice: { token: string; id: number };
let bob: string;

beforeAll(async () => {
  const user = await verifiedUser("devalice");
  alice = { token: user.tokens.access_token, id: user.id };
  bob = (await verifiedUser("devbob")).tokens.access_token;
});

const uploadPath = (camera: TestCamera) => `/v1/plugins/rpi-cam/device/cameras/${camera.id}/image-upload`;

/** The device's multipart upload of a capture. */
async function deviceUpload(
  camera: TestCamera,
  bytes: Uint8Array,
  uploadMetadata: unknown,
  captureMetadata: unknown = { ExposureTime: 0.01 },
): Promise<Response> {
  const form = new FormData();
  form.append("file", new File([bytes], "capture.jpg", { type: "image/jpeg" }));
  form.append("capture_metadata", JSON.stringify(captureMetadata));
  form.append("upload_metadata", JSON.stringify(uploadMetadata));
  return api(uploadPath(camera), { method: "POST", headers: { Authorization: `Bearer ${await assertion(camera)}` }, body: form });
}

/** A distinct small JPEG per call, so no two captures share bytes. */
function captureBytes(): Uint8Array {
  const seed = Math.floor(Math.random() * 200);
  return encodeJpeg(16, 8, (x, y) => [seed, x * 12, y * 24]);
}

/** A test device that answers `POST /captures` as a camera does: upload first, then answer. */
function capturingDevice(camera: TestCamera, bytes: () => Uint8Array = captureBytes) {
  return async (request: RequestFrame) => {
    if (request.path !== "/captures") return { status: 404, data: { detail: "unknown" } };
    const body = request.body as { product_id: number; description: string };
    const metadata = { ExposureTime: 0.02, AnalogueGain: 1.5 };
    const uploaded = await deviceUpload(camera, bytes(), { product_id: body.product_id, description: body.description }, metadata);
    if (uploaded.status !== 201) return { status: uploaded.status, data: await uploaded.json() };
    const { image_id, image_url } = (await uploaded.json()) as { image_id: string; image_url: string };
    return { status: 201, data: { status: "uploaded", image_id, image_url, metadata } };
  };
}

describe("a capture, end to end", () => {
  it("goes from the app through the tunnel to the device, back over HTTP into the media pipeline, and returns the image", async () => {
    const camera = await pairCamera(alice.token);
    const { product } = await productWithComponent(alice.token);
    const usage = (await (await me(alice.token)).json()) as { upload_file_count: number };
    const tunnel = await openTunnel(
      camera,
      capturingDevice(camera, () => jpegWithMetadata()),
    );

    const response = await cameraApi(alice.token, `/${camera.id}/captures`, {
      method: "POST",
      body: { product_id: product, description: "Lid off" },
    });
    expect(response.status, await response.clone().text()).toBe(201);
    const image = (await response.json()) as {
      id: string;
      status: string;
      description: string;
      image_url: string;
      image_metadata: Record<string, unknown>;
    };
    expect(image).toMatchObject({ status: "pending", description: "Lid off", image_metadata: { ExposureTime: 0.02, AnalogueGain: 1.5 } });
    expect(response.headers.get("location")).toBe(`/v1/products/${product}/images/${image.id}`);
    // The signed-in user, the camera with the record, the stored image (the device's upload is its own request).
    expect(roundTrips(response)).toBe(3);
    const request = tunnel.frames.find((frame) => frame.type === "request")!;
    expect(request).toMatchObject({ method: "POST", path: "/captures", body: { product_id: product, description: "Lid off" } });

    // Charged to the owner, sanitised, and published once scanned.
    expect(((await (await me(alice.token)).json()) as { upload_file_count: number }).upload_file_count).toBe(usage.upload_file_count + 1);
    await scan("images", image.id);
    const served = new Uint8Array(await (await api(pathOf(image.image_url))).arrayBuffer());
    expect(served[0]).toBe(0xff);
    for (const secret of Object.values(SECRETS)) expect(contains(served, secret)).toBe(false);
    const listed = (await (await api(`/v1/products/${product}/images`)).json()) as { items: { id: string }[] };
    expect(listed.items.map((item) => item.id)).toContain(image.id);
    tunnel.socket.close();
  });

  it("stores captures on components too", async () => {
    const camera = await pairCamera(alice.token);
    const { component } = await productWithComponent(alice.token);
    const tunnel = await openTunnel(camera, capturingDevice(camera));
    const response = await cameraApi(alice.token, `/${camera.id}/captures`, { method: "POST", body: { product_id: component } });
    expect(response.status).toBe(201);
    expect(response.headers.get("location")).toMatch(new RegExp(`^/v1/components/${component}/images/[0-9a-f]{32}$`));
    tunnel.socket.close();
  });

  it("refuses someone else's product before relaying anything", async () => {
    const camera = await pairCamera(alice.token);
    const { product: bobs } = await productWithComponent(bob);
    const tunnel = await openTunnel(camera, capturingDevice(camera));
    await expectProblem(
      await cameraApi(alice.token, `/${camera.id}/captures`, { method: "POST", body: { product_id: bobs } }),
      404,
      "PRODUCT_NOT_FOUND",
    );
    await expectProblem(
      await cameraApi(bob, `/${camera.id}/captures`, { method: "POST", body: { product_id: bobs } }),
      404,
      "CAMERA_NOT_FOUND",
    );
    expect(tunnel.frames.filter((frame) => frame.type === "request")).toEqual([]);
    tunnel.socket.close();
  });

  it("is 502 when the device answers without an uploaded image, and 503 when it is offline", async () => {
    const camera = await pairCamera(alice.token);
    const { product } = await productWithComponent(alice.token);
    await expectProblem(
      await cameraApi(alice.token, `/${camera.id}/captures`, { method: "POST", body: { product_id: product } }),
      503,
      "CAMERA_OFFLINE",
    );
    const tunnel = await openTunnel(camera, () => ({ status: 201, data: { status: "uploaded", image_id: "f".repeat(32) } }));
    await expectProblem(
      await cameraApi(alice.token, `/${camera.id}/captures`, { method: "POST", body: { product_id: product } }),
      502,
      "CAMERA_PROTOCOL_ERROR",
    );
    tunnel.socket.close();
  });
});

describe("the device's image upload", () => {
  it("answers 201 {image_id, image_url} and stores the capture metadata", async () => {
    const camera = await pairCamera(alice.token);
    const { product } = await productWithComponent(alice.token);
    const response = await deviceUpload(camera, captureBytes(), { product_id: product, description: "Side" }, { LensPosition: 2.5 });
    expect(response.status).toBe(201);
    // The camera, the assertion id, the record with its owner's usage, the insert-and-charge batch.
    expect(roundTrips(response)).toBe(4);
    const body = (await response.json()) as { image_id: string; image_url: string };
    expect(Object.keys(body).sort()).toEqual(["image_id", "image_url"]);
    const read = await api(`/v1/products/${product}/images/${body.image_id}`, { headers: bearer(alice.token) });
    expect(await read.json()).toMatchObject({ description: "Side", image_metadata: { LensPosition: 2.5 }, image_url: body.image_url });
  });

  it("refuses a product of another account, bad metadata, and a missing or spent assertion", async () => {
    const camera = await pairCamera(alice.token);
    const { product } = await productWithComponent(alice.token);
    const { product: bobs } = await productWithComponent(bob);
    await expectProblem(await deviceUpload(camera, captureBytes(), { product_id: bobs }), 404, "PRODUCT_NOT_FOUND");
    const invalid = await expectProblem(await deviceUpload(camera, captureBytes(), { product_id: "x" }), 422, "VALIDATION_FAILED");
    expect(invalid.errors?.[0]?.pointer).toBe("/upload_metadata/product_id");
    await expectProblem(await deviceUpload(camera, captureBytes(), { product_id: product, owner_id: 1 }), 422, "VALIDATION_FAILED");
    const form = new FormData();
    form.append("file", new File([captureBytes()], "c.jpg", { type: "image/jpeg" }));
    form.append("upload_metadata", JSON.stringify({ product_id: product }));
    await expectProblem(await api(uploadPath(camera), { method: "POST", body: form }), 401, "DEVICE_ASSERTION_INVALID");
    const token = await assertion(camera);
    const send = () => {
      const again = new FormData();
      again.append("file", new File([captureBytes()], "c.jpg", { type: "image/jpeg" }));
      again.append("upload_metadata", JSON.stringify({ product_id: product }));
      return api(uploadPath(camera), { method: "POST", headers: { Authorization: `Bearer ${token}` }, body: again });
    };
    expect((await send()).status).toBe(201);
    await expectProblem(await send(), 401, "DEVICE_ASSERTION_INVALID");
  });

  it("stores nothing while the owner's email address is unverified", async () => {
    const camera = await pairCamera(alice.token);
    const { product } = await productWithComponent(alice.token);
    await env.DB.prepare("UPDATE users SET is_verified = 0 WHERE id = ?").bind(alice.id).run();
    try {
      await expectProblem(await deviceUpload(camera, captureBytes(), { product_id: product }), 403, "OWNER_NOT_VERIFIED");
    } finally {
      await env.DB.prepare("UPDATE users SET is_verified = 1 WHERE id = ?").bind(alice.id).run();
    }
  });

  it("charges the camera owner's quota and refuses past it", async () => {
    const camera = await pairCamera(alice.token);
    const { product } = await productWithComponent(alice.token);
    await env.DB.prepare("UPDATE users SET upload_file_count = 1000 WHERE id = ?").bind(alice.id).run();
    try {
      await expectProblem(await deviceUpload(camera, captureBytes(), { product_id: product }), 403, "UPLOAD_QUOTA_EXCEEDED");
    } finally {
      await env.DB.prepare("UPDATE users SET upload_file_count = 0 WHERE id = ?").bind(alice.id).run();
    }
  });
});

describe("preview thumbnails", () => {
  it("are stored per camera and served to the owner only", async () => {
    const camera = await pairCamera(alice.token);
    await expectProblem(await cameraApi(alice.token, `/${camera.id}/preview-thumbnail`), 404, "PREVIEW_THUMBNAIL_NOT_FOUND");
    const bytes = captureBytes();
    const form = new FormData();
    form.append("file", new File([bytes], "preview.jpg", { type: "image/jpeg" }));
    const stored = await api(`/v1/plugins/rpi-cam/device/cameras/${camera.id}/preview-thumbnail-upload`, {
      method: "POST",
      headers: { Authorization: `Bearer ${await assertion(camera)}` },
      body: form,
    });
    expect(stored.status).toBe(204);
    const served = await cameraApi(alice.token, `/${camera.id}/preview-thumbnail`);
    expect(served.headers.get("content-type")).toBe("image/jpeg");
    expect(served.headers.get("cache-control")).toBe("private, no-store");
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);
    await expectProblem(await cameraApi(bob, `/${camera.id}/preview-thumbnail`), 404, "CAMERA_NOT_FOUND");
  });

  it("must be an image", async () => {
    const camera = await pairCamera(alice.token);
    const form = new FormData();
    form.append("file", new File([new TextEncoder().encode("not an image at all")], "preview.jpg", { type: "image/jpeg" }));
    const refused = await api(`/v1/plugins/rpi-cam/device/cameras/${camera.id}/preview-thumbnail-upload`, {
      method: "POST",
      headers: { Authorization: `Bearer ${await assertion(camera)}` },
      body: form,
    });
    await expectProblem(refused, 415, "UNSUPPORTED_MEDIA_TYPE");
  });
});

describe("unpairing", () => {
  it("lets the device unpair itself: the camera is gone and its tunnel closed", async () => {
    const camera = await pairCamera(alice.token);
    const tunnel = await openTunnel(camera);
    const response = await api(`/v1/plugins/rpi-cam/device/cameras/${camera.id}/self`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${await assertion(camera)}` },
    });
    expect(response.status).toBe(204);
    expect(await tunnel.closed).toMatchObject({ code: 4001 });
    expect(tunnel.frames.filter((frame) => frame.type === "request")).toEqual([]);
    await expectProblem(await cameraApi(alice.token, `/${camera.id}`), 404, "CAMERA_NOT_FOUND");
    await expectProblem(await handshake(camera), 401, "DEVICE_ASSERTION_INVALID");
  });

  it("goes with the owner's account: deleting it removes the cameras and closes their tunnels", async () => {
    const carol = await verifiedUser("devcarol");
    const camera = await pairCamera(carol.tokens.access_token);
    const tunnel = await openTunnel(camera);
    const deleted = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...bearer(carol.tokens.access_token), "content-type": "application/json" },
      body: JSON.stringify({ current_password: carol.password }),
    });
    expect(deleted.status, await deleted.clone().text()).toBe(204);
    expect(await tunnel.closed).toMatchObject({ code: 4001 });
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM cameras WHERE id = ?").bind(camera.id).first<{ n: number }>();
    expect(rows!.n).toBe(0);
    await expectProblem(await handshake(camera), 401, "DEVICE_ASSERTION_INVALID");
  });
});
