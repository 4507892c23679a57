import { DurableObject } from "cloudflare:workers";
import type { AppBindings } from "../src/env";

/**
 * One instance per paired camera (SQLite-backed), addressed by the camera id. It will hold the
 * device's hibernatable WebSocket tunnel and relay app commands over it; until the camera plugin
 * lands no route reaches it.
 */
export class CameraRelay extends DurableObject<AppBindings> {}
