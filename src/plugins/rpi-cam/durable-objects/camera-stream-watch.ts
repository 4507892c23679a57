import type { Services } from "../../../container";
import { findStream, stopStream } from "../services/camera-streams";

/** A stream whose device has been gone this long is ended by the camera's object. */
export const STREAM_ORPHAN_AFTER_MS = 5 * 60_000;

/** Storage key of the stream the camera runs, if any. */
export const STREAM_KEY = "stream";

/** What the object keeps while its camera streams (storage key `stream`). */
export interface WatchedStream {
  cameraId: string;
  /** The broadcast of the stream watched: an unwatch for another broadcast leaves this one be. */
  broadcastId: string;
  /** Epoch ms since when no live tunnel was seen; null while the device is there. */
  offlineSince: number | null;
}

/**
 * Ends a stream the device walked away from: completes the broadcast and saves it as a product
 * video, like the owner's stop, without asking the (absent) device. Errors are logged and the
 * caller tries again at its next alarm.
 */
export async function endOrphanedStream(svc: Services, cameraId: string): Promise<boolean> {
  try {
    const stream = await findStream(svc, cameraId);
    if (!stream) return true;
    await stopStream(svc, stream, "device_gone");
    return true;
  } catch (error) {
    svc.log.error("orphaned camera stream not ended", { camera_id: cameraId, error });
    return false;
  }
}

/**
 * The stream part of the camera object's heartbeat: notes since when the device is gone, and after
 * five minutes ends the stream. Returns whether a stream is still watched (the alarm keeps going).
 */
export async function checkWatchedStream(storage: DurableObjectStorage, svc: Services, deviceLive: boolean, now: number): Promise<boolean> {
  const stream = await storage.get<WatchedStream>(STREAM_KEY);
  if (!stream) return false;
  if (deviceLive) {
    if (stream.offlineSince !== null) await storage.put(STREAM_KEY, { ...stream, offlineSince: null });
    return true;
  }
  const since = stream.offlineSince ?? now;
  if (stream.offlineSince === null) await storage.put(STREAM_KEY, { ...stream, offlineSince: now });
  if (now - since < STREAM_ORPHAN_AFTER_MS) return true;
  if (!(await endOrphanedStream(svc, stream.cameraId))) return true;
  await storage.delete(STREAM_KEY);
  return false;
}
