import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { verifiedUser } from "../../../support/accounts";
import { cameraApi, openTunnel, pairCamera, type TestCamera } from "../../../support/camera";

// The slow tier (npm run test:slow) of tunnel.test.ts: a real 12 s wait for the object's eviction.

let token: string;

beforeAll(async () => {
  token = (await verifiedUser("camtunnel")).tokens.access_token;
});

const relayOf = (camera: TestCamera) => env.CAMERA_RELAY.get(env.CAMERA_RELAY.idFromName(camera.id));
const telemetry = (camera: TestCamera) => cameraApi(token, `/${camera.id}/telemetry`);
const echo = (request: { path: string }) => ({ status: 200, data: { path: request.path } });

describe("hibernation", () => {
  // workerd evicts an object after 10 s without work; hibernatable sockets stay open meanwhile.
  it("keeps relaying after the camera's object was evicted, with the tunnel's state kept on the socket", { timeout: 30_000 }, async () => {
    const camera = await pairCamera(token);
    const tunnel = await openTunnel(camera, echo);
    const before = await runInDurableObject(relayOf(camera), (instance) => instance);
    const statusBefore = (await (await cameraApi(token, `/${camera.id}/status`)).json()) as { connected_at: string };
    await new Promise((resolve) => setTimeout(resolve, 12_000));

    const response = await telemetry(camera);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ path: "/system/telemetry" });
    const after = await runInDurableObject(relayOf(camera), (instance) => instance);
    expect(after).not.toBe(before);
    // Same tunnel, same state: the attachment outlived the instance.
    expect(await (await cameraApi(token, `/${camera.id}/status`)).json()).toMatchObject({
      connection: "online",
      connected_at: statusBefore.connected_at,
    });
    expect(tunnel.socket.readyState).toBe(WebSocket.OPEN);
    tunnel.socket.close();
  });
});
