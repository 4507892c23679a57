import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { WatchedStream } from "../../durable-objects/camera-stream-watch";
import type { DeviceAnswer, RequestFrame, TestCamera } from "./camera";
import { FAKE_YOUTUBE_API } from "./fake-upstream-config";

/** The fake video platform's state (no keys), shared by every test file: look at your own sub or ids. */
export interface PlatformState {
  broadcasts: { id: string; title: string; privacyStatus: string; lifeCycleStatus: string; boundStreamId: string | null; deleted: boolean; owner_sub: string }[];
  streams: { id: string; deleted: boolean; owner_sub: string }[];
}

export async function platform(): Promise<PlatformState> {
  const response = await fetch(new URL("/__state", FAKE_YOUTUBE_API));
  expect(response.status).toBe(200);
  return (await response.json()) as PlatformState;
}

/** One broadcast on the fake platform, by id. */
export const broadcast = async (id: string) => (await platform()).broadcasts.find((b) => b.id === id);

/** A device that streams when asked: POST starts, GET reports, DELETE stops. */
export const streamingDevice = (request: RequestFrame): DeviceAnswer =>
  request.method === "POST" ? { status: 201, data: { streaming: true } } : request.method === "GET" ? { status: 200, data: { streaming: true, fps: 30 } } : { status: 204 };

/** The camera's relay object. */
export const relayOf = (camera: TestCamera) => env.CAMERA_RELAY.get(env.CAMERA_RELAY.idFromName(camera.id));

/** The object's `stream` marker (undefined when it watches no stream). */
export const watchMarker = (camera: TestCamera) => runInDurableObject(relayOf(camera), (_instance, state) => state.storage.get<WatchedStream>("stream"));
