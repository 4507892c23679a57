import type { Context } from "hono";
import type { AppEnv } from "../../../../env";
import type { RelayDeps } from "../../../../services/camera-relay";

/** The relay dependencies of one request. */
export function relayDeps(c: Context<AppEnv>): RelayDeps {
  return { relays: c.env.CAMERA_RELAY, timeoutMs: c.get("config").cameraRelayTimeoutMs, log: c.get("log") };
}
