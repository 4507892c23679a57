import type { Context } from "hono";
import type { AppEnv } from "../../../../env";
import { ApiError } from "../../../../lib/problem";
import { enforceLimits, subjects } from "../../../../rate-limits/client";
import { CAMERA_ID_HEADER } from "../../protocol";
import { relayObject } from "../../services/camera-relay";
import { deviceAssertionRefused, verifyDeviceAssertion } from "../../services/device-assertion";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The device's tunnel handshake, `GET /v1/plugins/rpi-cam/ws/connect?camera_id=`. Refused, in
 * this order: any `Origin` header (a browser page must never open a device tunnel, so it is
 * refused before authentication looks at anything), a request that is not a WebSocket upgrade,
 * a bad assertion (401), too many handshakes of one camera. The upgrade then goes to the
 * camera's relay object, which accepts it; permessage-deflate is not offered on, so the
 * tunnel runs uncompressed (spec: compression disabled).
 */
export async function connectTunnel(c: Context<AppEnv>): Promise<Response> {
  if (c.req.header("origin") !== undefined) {
    throw new ApiError(403, { code: "BROWSER_ORIGIN_REFUSED", detail: "Camera tunnels do not accept connections carrying an Origin." });
  }
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, {
      code: "UPGRADE_REQUIRED",
      detail: "This is the camera tunnel: open it as a WebSocket.",
      headers: { Upgrade: "websocket" },
    });
  }
  const cameraId = c.req.query("camera_id") ?? "";
  if (!UUID.test(cameraId)) {
    throw new ApiError(400, { code: "CAMERA_ID_REQUIRED", detail: "Name the camera in the `camera_id` query parameter." });
  }
  const camera = await verifyDeviceAssertion(c.get("services"), c.req.header("authorization"), cameraId);
  if (c.get("services").config.rateLimitsEnabled) {
    // After authentication, so nobody can use up a camera's handshakes by knowing its id.
    await enforceLimits(c.get("services"), subjects.camera(camera.id), ["camera-connect-camera"]);
  }
  const headers = new Headers({ Upgrade: "websocket", [CAMERA_ID_HEADER]: camera.id });
  c.get("log").info("camera tunnel opening", { camera_id: camera.id });
  const response = await relayObject(c.get("services"), camera.id).fetch("https://camera-relay/connect", { headers });
  // 410: the camera was deleted between the assertion check and here.
  if (response.status !== 101) throw deviceAssertionRefused();
  return response;
}
