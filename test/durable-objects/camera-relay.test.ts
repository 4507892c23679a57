import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CameraRelay } from "../../src/plugins/rpi-cam/durable-objects/camera-relay";

describe("CameraRelay", () => {
  it("is bound as CAMERA_RELAY and backed by SQLite storage", async () => {
    const stub = env.CAMERA_RELAY.get(env.CAMERA_RELAY.idFromName("camera-1"));
    const rows = await runInDurableObject(stub, (instance, state) => {
      expect(instance).toBeInstanceOf(CameraRelay);
      return state.storage.sql.exec("SELECT 1 AS one").toArray();
    });
    expect(rows).toEqual([{ one: 1 }]);
  });
});
