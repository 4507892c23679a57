import type { Plugin } from "../../plugin";
import { cameraConfig } from "./config";
import { camerasRouter } from "./routes/cameras/cameras.index";
import { deviceRouter } from "./routes/device/device.index";
import { pairingRouter } from "./routes/pairing/pairing.index";
import { tunnelRouter } from "./routes/tunnel/tunnel.index";
import { cleanUp, RECONCILE_AFTER_SECONDS } from "./services/camera-clean-up";
import { endStreamsOf } from "./services/camera-streams";

/**
 * The Raspberry Pi camera plugin (docs/camera.md): pairing, device assertions, one Durable Object
 * per camera holding its tunnel (`CameraRelay`, exported by src/index.ts), relayed commands,
 * captures, and live streams to YouTube saved as product videos. `PLUGIN_RPI_CAM=false` switches it
 * off. What it keeps about core records it cleans up itself (services/camera-clean-up.ts).
 */
export const rpiCamPlugin: Plugin = {
  name: "rpi-cam",
  isEnabled: (env) => cameraConfig(env).enabled,
  routes(app) {
    app.route("/v1", pairingRouter);
    app.route("/v1", camerasRouter);
    app.route("/v1", deviceRouter);
    app.route("/v1", tunnelRouter);
  },
  openApiTags: [
    {
      name: "Cameras",
      description:
        "The Raspberry Pi camera plugin: pair a camera, see whether it is online, take pictures onto your products, and relay its controls. The device's own side (pairing, callbacks, tunnel) is a private contract outside this schema.",
    },
  ],
  // While the account and its video link exist: its live streams end as the owner's stop would,
  // saved as videos (after the deletion the grant is revoked and nothing could end them).
  accountDeleting: (svc, userId) => endStreamsOf(svc, userId),
  async onEvent(svc, event) {
    await cleanUp(svc, event.type === "records.deleted" ? { productIds: event.ids } : { userId: event.userId });
  },
  async scheduled(svc, at) {
    await cleanUp(svc, { createdBefore: Math.floor(at / 1000) - RECONCILE_AFTER_SECONDS });
  },
  // The stream key of a running broadcast, sealed as services/camera-streams.ts seals it.
  sealedColumns: [{ table: "camera_streams", column: "stream_key_sealed", context: "'stream-key:' || camera_id" }],
};
