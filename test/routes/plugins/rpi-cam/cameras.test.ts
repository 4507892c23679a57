import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, verifiedUser } from "../../../support/accounts";
import { assertion, cameraApi, handshake, openTunnel, pairCamera, type RequestFrame } from "../../../support/camera";
import { apiWithVars, expectProblem, roundTrips } from "../../../support/http";

// The app's camera routes (decisions.md, Camera plugin): the owner's cameras only (anyone else's
// is 404), status and telemetry, the allow-list of relayed commands (403 otherwise), time-outs
// and offline cameras (503), the HLS proxy, local access, and deletion telling the device to unpair.

let alice: string;
let bob: string;

beforeAll(async () => {
  [alice, bob] = [(await verifiedUser("camalice")).tokens.access_token, (await verifiedUser("cambob")).tokens.access_token];
});

const echo = (request: RequestFrame) => ({ status: 200, data: { method: request.method, path: request.path, body: request.body } });

describe("camera records", () => {
  it("lists, reads, renames and isolates cameras by owner", async () => {
    const first = await pairCamera(alice, "First");
    const second = await pairCamera(alice, "Second");
    await pairCamera(bob, "Bob's");
    const list = await cameraApi(alice, "?size=10");
    expect(list.status).toBe(200);
    // One for the signed-in user, one for the page and its count.
    expect(roundTrips(list)).toBe(2);
    const page = (await list.json()) as { items: { id: string; name: string }[]; total: number };
    expect(page.items.map((camera) => camera.name)).toEqual(["First", "Second"]);
    expect(page.total).toBe(2);

    const read = await cameraApi(alice, `/${first.id}`);
    expect(await read.json()).toMatchObject({ id: first.id, name: "First", description: null, last_seen_at: null });
    const renamed = await cameraApi(alice, `/${second.id}`, { method: "PATCH", body: { name: "Bench", description: "Left" } });
    expect(await renamed.json()).toMatchObject({ name: "Bench", description: "Left" });
    await expectProblem(await cameraApi(alice, `/${second.id}`, { method: "PATCH", body: { key_id: "x" } }), 422, "VALIDATION_FAILED");

    for (const [method, path] of [
      ["GET", ""],
      ["PATCH", ""],
      ["DELETE", ""],
      ["GET", "/status"],
      ["GET", "/telemetry"],
      ["GET", "/local-access"],
      ["GET", "/preview-thumbnail"],
      ["GET", "/hls/index.m3u8"],
      ["POST", "/commands"],
      ["POST", "/recording-stream"],
      ["GET", "/recording-stream"],
      ["DELETE", "/recording-stream"],
      ["POST", "/commands#reserved"],
      ["POST", "/hls/..%5Cx"],
    ] as const) {
      const body =
        method === "PATCH"
          ? { name: "Mine" }
          : path === "/commands"
            ? { method: "GET", path: "/camera" }
            : path === "/commands#reserved"
              ? { method: "DELETE", path: "/pairing" }
              : path === "/recording-stream" && method === "POST"
                ? { product_id: 1 }
                : undefined;
      const route = path.replace("#reserved", "");
      await expectProblem(
        await cameraApi(bob, `/${first.id}${route}`, { method: route.startsWith("/hls") ? "GET" : method, body }),
        404,
        "CAMERA_NOT_FOUND",
      );
    }
    await expectProblem(await cameraApi(alice, "/not-a-uuid"), 422, "VALIDATION_FAILED");
  });

  it("needs a signed-in user", async () => {
    const anonymous = await apiWithVars({}, "/v1/plugins/rpi-cam/cameras");
    await expectProblem(anonymous, 401, "AUTHENTICATION_REQUIRED");
  });

  it("adds status and telemetry on request, telemetry null when offline", async () => {
    const camera = await pairCamera(alice);
    const offline = await (await cameraApi(alice, `/${camera.id}?include_status=true&include_telemetry=true`)).json();
    expect(offline).toMatchObject({ status: { connection: "offline", last_seen_at: null, connected_at: null }, telemetry: null });
    const tunnel = await openTunnel(camera, () => ({ status: 200, data: { cpu_temperature_c: 48.5 } }));
    const onlineResponse = await cameraApi(alice, `/${camera.id}?include_status=true&include_telemetry=true`);
    // The signed-in user and the camera; status and telemetry come from the relay object, not D1.
    expect(roundTrips(onlineResponse)).toBe(2);
    const online = await onlineResponse.json();
    expect(online).toMatchObject({ status: { connection: "online" }, telemetry: { cpu_temperature_c: 48.5 } });
    const plain = (await (await cameraApi(alice, `/${camera.id}`)).json()) as Record<string, unknown>;
    expect(plain).not.toHaveProperty("status");
    expect(plain).not.toHaveProperty("telemetry");
    tunnel.socket.close();
  });
});

describe("relayed commands", () => {
  it("relays allow-listed commands and refuses anything else before the tunnel", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera, echo);
    const allowed = await cameraApi(alice, `/${camera.id}/commands`, {
      method: "POST",
      body: { method: "PATCH", path: "/camera/controls", body: { ExposureTime: 100 } },
    });
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({
      status: 200,
      content_type: "application/json",
      data: { method: "PATCH", path: "/camera/controls", body: { ExposureTime: 100 } },
    });
    for (const [method, path] of [
      ["DELETE", "/camera/controls"],
      ["GET", "/system/shell"],
      ["POST", "/system/reboot"],
      ["GET", "/camera/../system/telemetry"],
      ["GET", "/preview/hls/../../etc/passwd"],
      ["GET", "/preview/hls/%2e%2e/secret"],
      ["GET", "/preview/hls/%252e%252e/secret"],
      ["PUT", "/pairing"],
    ]) {
      const refused = await cameraApi(alice, `/${camera.id}/commands`, { method: "POST", body: { method, path } });
      const problem = await expectProblem(refused, 403, "RELAY_COMMAND_NOT_ALLOWED");
      expect(problem.detail).toBe("Relay command is not allowed.");
    }
    // Commands with a route of their own go there, so its checks always apply.
    for (const [method, path] of [
      ["DELETE", "/pairing"],
      ["POST", "/captures"],
      ["POST", "/streams/youtube"],
      ["GET", "/streams/youtube"],
    ]) {
      const reserved = await cameraApi(alice, `/${camera.id}/commands`, {
        method: "POST",
        body: { method, path, body: { product_id: 1 } },
      });
      await expectProblem(reserved, 409, "RELAY_COMMAND_RESERVED");
    }
    const requests = tunnel.frames.filter((frame) => frame.type === "request");
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ type: "request", method: "PATCH", path: "/camera/controls", params: {}, headers: {} });
    tunnel.socket.close();
  });

  it("answers 503 when the device does not answer in time, and ignores its late answer", async () => {
    const camera = await pairCamera(alice);
    const late: RequestFrame[] = [];
    // Silent the first time, prompt afterwards.
    const tunnel = await openTunnel(camera, (request) => {
      late.push(request);
      return late.length === 1 ? null : { status: 200, data: { answer: late.length } };
    });
    const response = await apiWithVars({ CAMERA_RELAY_TIMEOUT_MS: "300" }, `/v1/plugins/rpi-cam/cameras/${camera.id}/telemetry`, {
      headers: bearer(alice),
    });
    await expectProblem(response, 503, "CAMERA_TIMEOUT");
    tunnel.socket.send(JSON.stringify({ type: "response", id: late[0]!.id, status: 200, data: { answer: "late" } }));
    // The same tunnel stays usable, and the late answer is not taken for the next command's.
    const next = await cameraApi(alice, `/${camera.id}/telemetry`);
    expect(await next.json()).toEqual({ answer: 2 });
    tunnel.socket.close();
  });

  it("passes a device error on as 502 and a device that closes mid-command as 503", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera, (request) => {
      if (request.path === "/system/telemetry") return { status: 500, data: { detail: "sensor unplugged" } };
      tunnel.socket.close(1001, "going away");
      return null;
    });
    const failed = await expectProblem(await cameraApi(alice, `/${camera.id}/telemetry`), 502, "CAMERA_COMMAND_FAILED");
    expect(failed.detail).toContain("sensor unplugged");
    await expectProblem(await cameraApi(alice, `/${camera.id}/local-access`), 503, "CAMERA_OFFLINE");
  });

  it("returns binary answers as bytes, and never with a content type a browser would render", async () => {
    const camera = await pairCamera(alice);
    const bytes = new Uint8Array([0x47, 1, 2, 3, 4]);
    const tunnel = await openTunnel(camera, (request) =>
      request.path.endsWith(".ts")
        ? { status: 200, contentType: "video/mp2t", binary: bytes }
        : { status: 200, contentType: "text/html; charset=utf-8", binary: new TextEncoder().encode("<script>alert(1)</script>") },
    );
    const response = await cameraApi(alice, `/${camera.id}/commands`, {
      method: "POST",
      body: { method: "GET", path: "/preview/hls/segment0.ts" },
    });
    expect(response.headers.get("content-type")).toBe("video/mp2t");
    expect(response.headers.get("x-camera-status")).toBe("200");
    expect(response.headers.get("content-disposition")).toBe("attachment");
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
    const html = await cameraApi(alice, `/${camera.id}/commands`, {
      method: "POST",
      body: { method: "GET", path: "/preview/hls/page.html" },
    });
    expect(html.headers.get("content-type")).toBe("application/octet-stream");
    expect(html.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    const proxied = await cameraApi(alice, `/${camera.id}/hls/page.html`);
    expect(proxied.headers.get("content-type")).toBe("video/mp2t");
    expect(proxied.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    tunnel.socket.close();
  });

  it("takes a binary frame the runtime handed over before its response frame", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera);
    const bytes = new Uint8Array([0x47, 9, 8, 7]);
    const answered = cameraApi(alice, `/${camera.id}/commands`, {
      method: "POST",
      body: { method: "GET", path: "/preview/hls/segment1.ts" },
    });
    const request = await tunnel.next((frame) => frame.type === "request" && frame.path === "/preview/hls/segment1.ts");
    tunnel.socket.send(bytes);
    tunnel.socket.send(
      JSON.stringify({ type: "response", id: request.id, status: 200, content_type: "video/mp2t", has_binary: true, data: null }),
    );
    const response = await answered;
    expect(response.status).toBe(200);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
    tunnel.socket.close();
  });

  it("needs a verified account to change the camera, not to read it", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera, echo);
    await env.DB.prepare("UPDATE users SET is_verified = 0 WHERE id = (SELECT owner_id FROM cameras WHERE id = ?)").bind(camera.id).run();
    try {
      expect((await cameraApi(alice, `/${camera.id}/commands`, { method: "POST", body: { method: "GET", path: "/camera" } })).status).toBe(
        200,
      );
      await expectProblem(
        await cameraApi(alice, `/${camera.id}/commands`, { method: "POST", body: { method: "PATCH", path: "/camera/controls", body: {} } }),
        403,
        "EMAIL_NOT_VERIFIED",
      );
      await expectProblem(await cameraApi(alice, `/${camera.id}`, { method: "PATCH", body: { name: "x" } }), 403, "EMAIL_NOT_VERIFIED");
      await expectProblem(await cameraApi(alice, `/${camera.id}`, { method: "DELETE" }), 403, "EMAIL_NOT_VERIFIED");
    } finally {
      await env.DB.prepare("UPDATE users SET is_verified = 1 WHERE id = (SELECT owner_id FROM cameras WHERE id = ?)").bind(camera.id).run();
    }
    tunnel.socket.close();
  });

  it("refuses a command too large for a tunnel frame with 413", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera, echo);
    const body = { notes: "z".repeat(70 * 1024) };
    const refused = await cameraApi(alice, `/${camera.id}/commands`, {
      method: "POST",
      body: { method: "PATCH", path: "/camera/controls", body },
    });
    await expectProblem(refused, 413, "RELAY_COMMAND_TOO_LARGE");
    tunnel.socket.close();
  });
});

describe("the HLS proxy and local access", () => {
  it("relays playlist and segments, and never a path that climbs out", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera, (request) => {
      if (request.path === "/preview/hls/index.m3u8")
        return { status: 200, contentType: "application/vnd.apple.mpegurl", data: "#EXTM3U\n" };
      if (request.path === "/preview/hls/segment1.ts") return { status: 200, contentType: "video/mp2t", binary: new Uint8Array([0x47, 9]) };
      return { status: 404, data: { detail: "no such file" } };
    });
    const playlist = await cameraApi(alice, `/${camera.id}/hls/index.m3u8`);
    expect(playlist.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(await playlist.text()).toBe("#EXTM3U\n");
    const segment = await cameraApi(alice, `/${camera.id}/hls/segment1.ts`);
    expect(new Uint8Array(await segment.arrayBuffer())).toEqual(new Uint8Array([0x47, 9]));
    await expectProblem(await cameraApi(alice, `/${camera.id}/hls/segment9.ts`), 404, "HLS_FILE_NOT_FOUND");
    // URL parsing already resolves a bare `%2e%2e` segment, so that request never reaches the proxy.
    expect((await cameraApi(alice, `/${camera.id}/hls/%2e%2e`)).status).toBe(404);
    for (const path of ["%2E%2E%2Fsystem%2Ftelemetry", "x%2F%2E%2E%2F%2E%2E%2Fpairing", "..%5Csecret", "%252e%252e", "a%00b"]) {
      const refused = await cameraApi(alice, `/${camera.id}/hls/${path}`);
      expect(refused.status, path).toBe(400);
      await expectProblem(refused, 400, "INVALID_HLS_PATH");
    }
    const relayed = tunnel.frames.filter((frame) => frame.type === "request").map((frame) => frame.path);
    expect(relayed).toEqual(["/preview/hls/index.m3u8", "/preview/hls/segment1.ts", "/preview/hls/segment9.ts"]);
    tunnel.socket.close();
  });

  it("hands over the device-local key for X-API-Key, never cached", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera, () => ({
      status: 200,
      data: { api_key: "local-key-123", local_urls: ["http://192.168.1.20:8018"] },
    }));
    const response = await cameraApi(alice, `/${camera.id}/local-access`);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ header_name: "X-API-Key", api_key: "local-key-123", local_urls: ["http://192.168.1.20:8018"] });
    tunnel.socket.close();
  });
});

describe("deleting a camera", () => {
  it("tells the connected device to unpair, closes its tunnel and revokes its key", async () => {
    const camera = await pairCamera(alice);
    const tunnel = await openTunnel(camera);
    const token = await assertion(camera);
    const deleted = await cameraApi(alice, `/${camera.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    await tunnel.next((frame) => frame.type === "request" && frame.method === "DELETE" && frame.path === "/pairing");
    expect(await tunnel.closed).toMatchObject({ code: 4001 });
    await expectProblem(await handshake(camera, token), 401, "DEVICE_ASSERTION_INVALID");
    await expectProblem(await cameraApi(alice, `/${camera.id}`), 404, "CAMERA_NOT_FOUND");
    const jtis = await env.DB.prepare("SELECT count(*) AS n FROM camera_assertion_jtis WHERE camera_id = ?")
      .bind(camera.id)
      .first<{ n: number }>();
    expect(jtis!.n).toBe(0);
  });
});
