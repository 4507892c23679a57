import { flag, positiveInt } from "../../config";
import { DEFAULT_RELAY_TIMEOUT_MS } from "./protocol";

/** The camera plugin's own settings, read from the Worker's variables beside the core's configuration. */
export interface CameraConfig {
  /** `PLUGIN_RPI_CAM`: whether this deployment runs the plugin (default true). */
  enabled: boolean;
  /** `CAMERA_RELAY_TIMEOUT_MS`: how long a relayed camera command waits for the device (default 30 s). */
  relayTimeoutMs: number;
}

const cache = new WeakMap<object, CameraConfig>();

/** Reads and checks the plugin's variables once per `env` object; a bad value throws `ConfigError` (a 500 naming the variable). */
export function cameraConfig(env: Env): CameraConfig {
  let config = cache.get(env);
  if (!config) {
    config = {
      enabled: flag(env.PLUGIN_RPI_CAM, "PLUGIN_RPI_CAM", true),
      relayTimeoutMs: positiveInt(env.CAMERA_RELAY_TIMEOUT_MS, "CAMERA_RELAY_TIMEOUT_MS", DEFAULT_RELAY_TIMEOUT_MS),
    };
    cache.set(env, config);
  }
  return config;
}
