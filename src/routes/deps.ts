import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { StreamDeps } from "../services/camera-streams";
import type { ServiceDeps } from "../services/deps";

/** The request's services, as the account services take them. */
export function serviceDeps(c: Context<AppEnv>): ServiceDeps {
  return {
    db: c.get("db"),
    config: c.get("config"),
    log: c.get("log"),
    email: c.get("email"),
    limiter: c.get("limiter"),
    defer: (work) => c.executionCtx.waitUntil(work),
  };
}

/** What the live-stream services take: the database, configuration, the log and the camera relay. */
export function streamDeps(c: Context<AppEnv>): StreamDeps {
  const log = c.get("log");
  return { db: c.get("db"), config: c.get("config"), log, relay: { relays: c.env.CAMERA_RELAY, timeoutMs: c.get("config").cameraRelayTimeoutMs, log } };
}
