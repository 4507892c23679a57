import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { TunnelState } from "../../../../src/plugins/rpi-cam/durable-objects/camera-relay";
import { verifiedUser } from "../../../support/accounts";
import { assertion, cameraApi, handshake, openTunnel, pairCamera, type TestCamera } from "../../../support/camera";
import { expectProblem } from "../../../support/http";
import { fireTogether, freshIp, limitedApi, statusCounts } from "../../../support/limits";

// The camera's relay object and its tunnel (decisions.md, Camera plugin): one object per camera,
// the hibernation API, a heartbeat every 30 s with 90 s to go offline, a new tunnel replacing the
// old one, frames bounded (1009), a tunnel that keeps relaying after its object was evicted, and
// handshakes limited per client IP and per camera.

let token: string;

beforeAll(async () => {
  token = (await verifiedUser("camtunnel")).tokens.access_token;
});

const relayOf = (camera: TestCamera) => env.CAMERA_RELAY.get(env.CAMERA_RELAY.idFromName(camera.id));
const telemetry = (camera: TestCamera) => cameraApi(token, `/${camera.id}/telemetry`);
const echo = (request: { path: string }) => ({ status: 200, data: { path: request.path } });

/** How long ago (ms) each open tunnel of the camera last heard from its device, by the object's own record. */
function lastSeenAges(camera: TestCamera): Promise<number[]> {
  return runInDurableObject(relayOf(camera), (_instance, state) =>
    state.getWebSockets().map((socket) => Date.now() - (socket.deserializeAttachment() as TunnelState).lastSeenAt),
  );
}

/** Moves every tunnel's last sign of life `ms` into the past, as if the device had gone silent. */
async function silence(camera: TestCamera, ms: number): Promise<void> {
  await runInDurableObject(relayOf(camera), (_instance, state) => {
    for (const socket of state.getWebSockets()) {
      const tunnel = socket.deserializeAttachment() as TunnelState;
      socket.serializeAttachment({ ...tunnel, lastSeenAt: tunnel.lastSeenAt - ms });
    }
  });
}

describe("the tunnel", () => {
  it("relays to the device and records when the camera was last seen", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, echo);
    const response = await telemetry(camera);
    expect(await response.json()).toEqual({ path: "/system/telemetry" });
    const row = await env.DB.prepare("SELECT last_seen_at FROM cameras WHERE id = ?").bind(camera.id).first<{ last_seen_at: number }>();
    expect(Math.abs(row!.last_seen_at - Date.now() / 1000)).toBeLessThan(10);
    const status = await (await cameraApi(token, `/${camera.id}/status`)).json();
    expect(status).toMatchObject({ connection: "online" });
    tunnel.socket.close();
  });

  it("records the exact last sign of life when the tunnel closes", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, echo);
    // The connection wrote last_seen_at; make D1's copy stale, as a minute of heartbeats would.
    await env.DB.prepare("UPDATE cameras SET last_seen_at = last_seen_at - 50 WHERE id = ?").bind(camera.id).run();
    tunnel.socket.close(1000, "bye");
    await expect
      .poll(
        async () =>
          (await env.DB.prepare("SELECT last_seen_at FROM cameras WHERE id = ?").bind(camera.id).first<{ last_seen_at: number }>())!
            .last_seen_at,
      )
      .toBeGreaterThan(Date.now() / 1000 - 10);
    expect(await (await cameraApi(token, `/${camera.id}/status`)).json()).toMatchObject({ connection: "offline", connected_at: null });
  });

  it("is replaced by a new connection of the same camera", async () => {
    const camera = await pairCamera(token);
    const first = await openTunnel(camera, () => ({ status: 200, data: { tunnel: "first" } }));
    const second = await openTunnel(camera, () => ({ status: 200, data: { tunnel: "second" } }));
    expect(await first.closed).toMatchObject({ code: 4000 });
    expect(await (await telemetry(camera)).json()).toEqual({ tunnel: "second" });
    second.socket.close();
  });

  it("offers no compression: a device's permessage-deflate offer is declined", async () => {
    const camera = await pairCamera(token);
    // Straight to the object, with the offer: without no_web_socket_compression the runtime accepts it.
    const response = await relayOf(camera).fetch("https://camera-relay/connect", {
      headers: { Upgrade: "websocket", "x-relab-camera-id": camera.id, "Sec-WebSocket-Extensions": "permessage-deflate" },
    });
    expect(response.status).toBe(101);
    expect(response.headers.get("sec-websocket-extensions")).toBeNull();
    response.webSocket!.accept();
    response.webSocket!.close();
  });

  it("refuses a tunnel for a camera deleted after its assertion was checked", async () => {
    const camera = await pairCamera(token);
    // The deletion reached the object (its tombstone) while D1 still had the camera.
    await relayOf(camera).unpair(false);
    await expectProblem(await handshake(camera), 401, "DEVICE_ASSERTION_INVALID");
  });
});

describe("the heartbeat", () => {
  it("pings the device at each alarm and keeps a device that answers online", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, echo);
    await silence(camera, 85_000);
    expect(await runDurableObjectAlarm(relayOf(camera))).toBe(true);
    await tunnel.next((frame) => frame.type === "ping");
    // The pong (sent by the test device) brings the last sign of life back to now...
    await expect.poll(() => lastSeenAges(camera), { timeout: 3_000 }).toEqual([expect.any(Number)]);
    await expect.poll(async () => (await lastSeenAges(camera))[0]!, { timeout: 3_000 }).toBeLessThan(5_000);
    // ...so ten more seconds of silence leave it online, where without the pong it would be 95 s.
    await silence(camera, 10_000);
    expect(await (await cameraApi(token, `/${camera.id}/status`)).json()).toMatchObject({ connection: "online" });
    // The next heartbeat is scheduled.
    expect(await runDurableObjectAlarm(relayOf(camera))).toBe(true);
    tunnel.socket.close();
  });

  it("counts a device's own pings, answered without waking the object, as signs of life", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera);
    await silence(camera, 91_000);
    expect(await (await cameraApi(token, `/${camera.id}/status`)).json()).toMatchObject({ connection: "offline" });
    tunnel.socket.send('{"type":"ping"}');
    await tunnel.next((frame) => frame.type === "pong");
    expect(await (await cameraApi(token, `/${camera.id}/status`)).json()).toMatchObject({ connection: "online" });
    tunnel.socket.close();
  });

  it("unpairs a tunnel whose camera is gone from D1 at the next minute's check, and closes one of an inactive owner", async () => {
    const gone = await pairCamera(token);
    const goneTunnel = await openTunnel(gone);
    await env.DB.prepare("DELETE FROM cameras WHERE id = ?").bind(gone.id).run();
    await runInDurableObject(relayOf(gone), (_instance, state) => {
      for (const socket of state.getWebSockets()) {
        const tunnel = socket.deserializeAttachment() as TunnelState;
        socket.serializeAttachment({ ...tunnel, lastRecordedAt: tunnel.lastRecordedAt - 61_000 });
      }
    });
    await runDurableObjectAlarm(relayOf(gone));
    await goneTunnel.next((frame) => frame.type === "request" && frame.path === "/pairing");
    expect(await goneTunnel.closed).toMatchObject({ code: 4001 });

    const carol = await verifiedUser("camcarol");
    const camera = await pairCamera(carol.tokens.access_token);
    const tunnel = await openTunnel(camera);
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(carol.id).run();
    await runInDurableObject(relayOf(camera), (_instance, state) => {
      for (const socket of state.getWebSockets()) {
        const tunnel = socket.deserializeAttachment() as TunnelState;
        socket.serializeAttachment({ ...tunnel, lastRecordedAt: tunnel.lastRecordedAt - 61_000 });
      }
    });
    await runDurableObjectAlarm(relayOf(camera));
    expect(await tunnel.closed).toMatchObject({ code: 4003 });
    expect(tunnel.frames.filter((frame) => frame.type === "request")).toEqual([]);
  });

  it("takes a device silent for more than 90 s offline: relays fail at once, and the alarm closes the tunnel", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, () => null);
    await silence(camera, 91_000);
    const status = await (await cameraApi(token, `/${camera.id}/status`)).json();
    expect(status).toMatchObject({ connection: "offline" });
    await expectProblem(await telemetry(camera), 503, "CAMERA_OFFLINE");
    expect(tunnel.frames.filter((frame) => frame.type === "request")).toEqual([]);
    await runDurableObjectAlarm(relayOf(camera));
    expect(await tunnel.closed).toMatchObject({ code: 4002 });
  });

  it("answers 503 at once for a camera that never connected", async () => {
    const camera = await pairCamera(token);
    const problem = await expectProblem(await telemetry(camera), 503, "CAMERA_OFFLINE");
    expect(problem.detail).toContain("no live connection");
  });
});

describe("hibernation", () => {
  it("loses the tunnel when the object is reset rather than evicted, and says so", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, echo);
    await abortAllDurableObjects();
    expect((await tunnel.closed).code).toBe(1006);
    await expectProblem(await telemetry(camera), 503, "CAMERA_OFFLINE");
  });
});

describe("frame limits", () => {
  it("closes the tunnel with 1009 on a text frame over 64 KiB", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera);
    tunnel.socket.send(JSON.stringify({ type: "pong", padding: "x".repeat(64 * 1024) }));
    expect(await tunnel.closed).toMatchObject({ code: 1009 });
  });

  it("accepts a text frame of exactly 64 KiB", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, echo);
    const frame = JSON.stringify({ type: "pong", padding: "" });
    tunnel.socket.send(JSON.stringify({ type: "pong", padding: "y".repeat(64 * 1024 - frame.length) }));
    expect((await telemetry(camera)).status).toBe(200);
    tunnel.socket.close();
  });

  it("closes the tunnel with 1009 on a binary frame over 10 MiB", async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera);
    tunnel.socket.send(new Uint8Array(10 * 1024 * 1024 + 1));
    expect(await tunnel.closed).toMatchObject({ code: 1009 });
  });
});

describe("handshake limits", () => {
  it("allows 12 handshakes a minute per camera, counted after authentication", async () => {
    const camera = await pairCamera(token);
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++) {
      const response = await limitedApi(freshIp(), `/v1/plugins/rpi-cam/ws/connect?camera_id=${camera.id}`, {
        headers: { Upgrade: "websocket", Authorization: `Bearer ${await assertion(camera)}` },
      });
      statuses.push(response.status);
      response.webSocket?.accept();
      response.webSocket?.close();
    }
    expect(statuses.slice(0, 12).every((status) => status === 101)).toBe(true);
    expect(statuses[12]).toBe(429);
  });

  it("allows 30 handshakes a minute per client IP, refused ones included", async () => {
    const ip = freshIp();
    const camera = await pairCamera(token);
    const send = () =>
      limitedApi(ip, `/v1/plugins/rpi-cam/ws/connect?camera_id=${camera.id}`, {
        headers: { Upgrade: "websocket", Authorization: "Bearer x.y.z" },
      });
    const responses = await fireTogether(30, send);
    expect(statusCounts(responses)).toEqual({ 401: 30 });
    const refused = await expectProblem(await send(), 429, "RATE_LIMITED");
    expect(refused.detail).toBeTruthy();
  });
});
