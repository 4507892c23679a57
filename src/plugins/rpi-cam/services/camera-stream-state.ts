import { and, eq } from "drizzle-orm";
import { cameraStreams } from "../schema";
import { relayCommand } from "./camera-relay";
import { readStream, type StreamRow, type StreamServices } from "./camera-streams";
import { broadcastStatus, videoAccount } from "./video-platform";

/**
 * How long a broadcast status read from the platform is reused. The platform's API quota is a
 * daily budget per project, and an app polling a stream every few seconds would spend it.
 */
export const PLATFORM_STATUS_TTL_SECONDS = 30;

/** A running stream with what the platform and the device say of it (null where they could not be asked). */
export interface StreamState {
  stream: StreamRow;
  platformStatus: string | null;
  device: Record<string, unknown> | null;
}

/**
 * The caller's running stream of the camera, with the broadcast's status on the platform (read
 * at most once per `PLATFORM_STATUS_TTL_SECONDS` and kept on the row) and the device's own state,
 * asked together. Neither failing fails the read.
 */
export async function readStreamState(svc: StreamServices, userId: number, cameraId: string): Promise<StreamState> {
  const stream = await readStream(svc, userId, cameraId);
  const [platformStatus, device] = await Promise.all([
    currentPlatformStatus(svc, stream),
    relayCommand(svc, cameraId, { method: "GET", path: "/streams/youtube" })
      .then((answer) => (answer.status === 200 ? deviceStreamState(answer.data) : null))
      .catch(() => null),
  ]);
  return { stream, platformStatus, device };
}

async function currentPlatformStatus(svc: StreamServices, stream: StreamRow): Promise<string | null> {
  const now = Math.floor(svc.clock.now() / 1000);
  if (stream.platform_checked_at !== null && now - stream.platform_checked_at < PLATFORM_STATUS_TTL_SECONDS) return stream.platform_status;
  let status: string | null;
  try {
    status = await broadcastStatus(videoAccount(svc, stream.user_id), stream.broadcast_id);
  } catch {
    // Unknown this time; the next read asks again.
    return null;
  }
  // Keeping it is an optimisation: a failed write costs the next read a platform call, nothing more.
  await svc.db
    .run(
      svc.db
        .update(cameraStreams)
        .set({ platform_status: status, platform_checked_at: now })
        .where(and(eq(cameraStreams.camera_id, stream.camera_id), eq(cameraStreams.broadcast_id, stream.broadcast_id))),
    )
    .catch((error: unknown) => svc.log.warn("stream status not kept", { camera_id: stream.camera_id, error: (error as Error).message }));
  return status;
}

/**
 * The device's view of its stream, reduced to known fields: whatever else it sends (an ingest URL
 * with the key in it, say) never reaches the client.
 */
function deviceStreamState(data: unknown): Record<string, unknown> | null {
  if (typeof data !== "object" || data === null) return null;
  const state = data as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  if (typeof state.streaming === "boolean") kept.streaming = state.streaming;
  if (typeof state.broadcast_id === "string") kept.broadcast_id = state.broadcast_id.slice(0, 128);
  if (typeof state.started_at === "string") kept.started_at = state.started_at.slice(0, 64);
  for (const key of ["fps", "bitrate_kbps", "dropped_frames"]) if (typeof state[key] === "number") kept[key] = state[key];
  return kept;
}
