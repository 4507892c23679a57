import { and, eq, type SQL, sql } from "drizzle-orm";
import { ownedBySql } from "../../../auth/permissions";
import type { Services } from "../../../container";
import { batchRows } from "../../../db/client";
import { columnList, columnsOf, type Row, type RowOf } from "../../../db/rows";
import { sealField } from "../../../lib/data-encryption";
import { ApiError, notFound } from "../../../lib/problem";
import type { VideoRow } from "../../../services/products/records";
import { MAX_VIDEOS, VIDEO_COLUMNS } from "../../../services/products/videos";
import { cameraStreams, cameras } from "../schema";
import { type RelayServices, relayCommand, relayObject } from "./camera-relay";
import { cameraNotFound } from "./cameras";
import {
  broadcastStatus,
  completeBroadcast,
  createLiveStream,
  type PlatformServices,
  removeLiveStream,
  retireIngestStream,
  type VideoAccount,
  videoAccount,
  watchUrl,
} from "./video-platform";

/** The columns every query that reads a stream selects (not the sealed key: it never leaves the service). */
const STREAM_FIELDS = [
  "camera_id",
  "user_id",
  "product_id",
  "broadcast_id",
  "stream_id",
  "title",
  "description",
  "privacy_status",
  "started_at",
  "platform_status",
  "platform_checked_at",
] as const satisfies readonly (keyof Row<typeof cameraStreams>)[];

/** A running stream as D1 holds it. */
export type StreamRow = RowOf<typeof cameraStreams, (typeof STREAM_FIELDS)[number]>;

export const STREAM_COLUMNS = columnList(STREAM_FIELDS);

/** A builder read of the streams matching `where`, with `STREAM_FIELDS`. */
const streamsWhere = (db: Services["db"], where: SQL) =>
  db.select(columnsOf(cameraStreams, STREAM_FIELDS)).from(cameraStreams).where(where);

/** The caller's camera `cameraId`, if it is theirs (the ownership rule over the camera's owner). */
const ownCameraStatement = (db: Services["db"], userId: number, cameraId: string) =>
  db
    .select({ id: cameras.id })
    .from(cameras)
    .where(and(eq(cameras.id, cameraId), ownedBySql(userId, sql`${cameras.owner_id}`)));

export const streamNotFound = () => notFound("This camera has no live stream.", "RECORDING_STREAM_NOT_FOUND");

/** What the stream services need: the database, configuration, the log, the camera relay and the outbound fetch. */
export type StreamServices = RelayServices & PlatformServices;

export interface StreamRequest {
  productId: number;
  title: string;
  description: string | null;
  privacyStatus: "public" | "private" | "unlisted";
}

/**
 * Starts a camera's live stream. Checked before anything is created on the platform: the camera
 * and the base product are the caller's (404), the product has room for the video (409), no
 * stream runs (409), the camera is online (503), the YouTube link exists (403, from the platform
 * client). Then: broadcast + stream on the platform, the row (conditional on none, so two starts
 * cannot both win), and `POST /streams/youtube` to the device with the ingest address and key. If
 * the device refuses or is gone, everything made is removed again. The caller then asks the
 * camera's object to watch the stream (it ends one whose device went away).
 */
export async function startStream(svc: StreamServices, userId: number, cameraId: string, request: StreamRequest): Promise<StreamRow> {
  const [cameras, products, running] = await batchRows<[{ id: string }, { id: number; videos: number }, { camera_id: string }]>(svc.db, [
    ownCameraStatement(svc.db, userId, cameraId),
    // Saving the stream adds a video: the write rule's `add`, the product's owner alone.
    // Raw: the product with its video count as a correlated sub-select.
    sql`SELECT p.id, (SELECT count(*) FROM videos v WHERE v.product_id = p.id) AS videos FROM products p
        WHERE p.id = ${request.productId} AND ${ownedBySql(userId, sql.raw("p.owner_id"))} AND p.parent_id IS NULL`,
    svc.db.select({ camera_id: cameraStreams.camera_id }).from(cameraStreams).where(eq(cameraStreams.camera_id, cameraId)),
  ]);
  if (!cameras[0]) throw cameraNotFound();
  if (!products[0])
    throw notFound("You have no base product with this id (streams are saved as videos of base products).", "PRODUCT_NOT_FOUND");
  if (products[0].videos >= MAX_VIDEOS) {
    throw new ApiError(409, {
      code: "VIDEO_LIMIT_REACHED",
      detail: `The product already holds ${MAX_VIDEOS} videos, so the stream could not be saved; delete one first.`,
    });
  }
  if (running[0]) throw alreadyStreaming();
  const status = await relayObject(svc, cameraId).status();
  if (!status.online)
    throw new ApiError(503, {
      code: "CAMERA_OFFLINE",
      detail: "The camera has no live connection; nothing was created.",
      headers: { "Retry-After": "30" },
    });

  const account = videoAccount(svc, userId);
  const created = await createLiveStream(account, {
    title: request.title,
    description: request.description,
    privacyStatus: request.privacyStatus,
  });
  const sealedKey = await sealField(svc.config.dataKey, created.streamKey, `stream-key:${cameraId}`);
  const now = Math.floor(svc.clock.now() / 1000);
  const rows = await svc.db.all<StreamRow>(
    // Raw: insert-if-absent on the camera, so of two starts one wins; every column given, no schema default filled in.
    sql`INSERT INTO camera_streams (camera_id, user_id, product_id, broadcast_id, stream_id, stream_key_sealed, title, description, privacy_status, started_at)
        VALUES (${cameraId}, ${userId}, ${request.productId}, ${created.broadcastId}, ${created.streamId}, ${sealedKey}, ${request.title}, ${request.description}, ${request.privacyStatus}, ${now})
        ON CONFLICT (camera_id) DO NOTHING RETURNING ${STREAM_COLUMNS}`,
  );
  const row = rows[0];
  if (!row) {
    await removeLiveStream(account, created.broadcastId, created.streamId);
    throw alreadyStreaming();
  }
  try {
    const answer = await relayCommand(svc, cameraId, {
      method: "POST",
      path: "/streams/youtube",
      body: { ingest_url: created.ingestUrl, stream_key: created.streamKey, broadcast_id: created.broadcastId },
    });
    if (answer.status < 200 || answer.status > 299) {
      throw new ApiError(502, {
        code: "CAMERA_COMMAND_FAILED",
        detail: `The camera could not start streaming (it answered ${answer.status}).`,
      });
    }
  } catch (error) {
    await svc.db.run(
      svc.db.delete(cameraStreams).where(and(eq(cameraStreams.camera_id, cameraId), eq(cameraStreams.broadcast_id, created.broadcastId))),
    );
    await removeLiveStream(account, created.broadcastId, created.streamId);
    throw error;
  }
  svc.log.info("camera stream started", { camera_id: cameraId, user_id: userId });
  return row;
}

function alreadyStreaming(): ApiError {
  return new ApiError(409, { code: "STREAM_ALREADY_RUNNING", detail: "This camera is already streaming; stop that stream first." });
}

/** The camera's running stream, whoever owns it, or null. */
export async function findStream(svc: Pick<Services, "db">, cameraId: string): Promise<StreamRow | null> {
  const rows = await svc.db.all<StreamRow>(streamsWhere(svc.db, eq(cameraStreams.camera_id, cameraId)));
  return rows[0] ?? null;
}

/** The caller's running stream of the camera; 404 for another's camera or when none runs. */
export async function readStream(svc: Pick<Services, "db">, userId: number, cameraId: string): Promise<StreamRow> {
  const [cameras, streams] = await batchRows<[{ id: string }, StreamRow]>(svc.db, [
    ownCameraStatement(svc.db, userId, cameraId),
    streamsWhere(svc.db, eq(cameraStreams.camera_id, cameraId)),
  ]);
  if (!cameras[0]) throw cameraNotFound();
  if (!streams[0]) throw streamNotFound();
  return streams[0];
}

/**
 * Ends a stream: tells the device to stop (best effort: a device that went away has stopped
 * anyway), ends the broadcast on the platform, deletes its ingest stream, and in ONE batch saves
 * it as a video of the product and removes the stream's row; the video goes in only while the row
 * is still there, so two stops racing save it once. Returns the video, or why none was saved (the
 * product had no room left, the broadcast never went live, or another stop won). The caller tells
 * the camera's object to stop watching the stream.
 */
export async function stopStream(svc: StreamServices, stream: StreamRow, reason: "owner" | "device_gone"): Promise<StopOutcome> {
  const recorded = await endOnDeviceAndPlatform(svc, stream, reason === "owner");
  const now = Math.floor(svc.clock.now() / 1000);
  const metadata = JSON.stringify({
    platform: "youtube",
    broadcast_id: stream.broadcast_id,
    privacy_status: stream.privacy_status,
    camera_id: stream.camera_id,
    started_at: stream.started_at,
    ended_at: now,
    ended_by: reason,
  });
  // Raw: the video is saved only while the stream row is there and the product has room (the
  // insert's own conditions), in the batch that deletes the row: one end wins.
  const mine = sql`camera_id = ${stream.camera_id} AND broadcast_id = ${stream.broadcast_id}`;
  const [videos, removed] = await batchRows<[VideoRow, { camera_id: string }]>(svc.db, [
    sql`INSERT INTO videos (product_id, url, title, description, video_metadata, created_at, updated_at)
        SELECT p.id, ${watchUrl(stream.broadcast_id)}, ${stream.title}, ${stream.description}, ${metadata}, ${now}, ${now}
        FROM products p WHERE p.id = ${stream.product_id} AND ${recorded ? 1 : 0} = 1
          AND (SELECT count(*) FROM videos WHERE product_id = p.id) < ${MAX_VIDEOS}
          AND EXISTS (SELECT 1 FROM camera_streams WHERE ${mine})
        RETURNING ${VIDEO_COLUMNS}`,
    sql`DELETE FROM camera_streams WHERE ${mine} RETURNING camera_id`,
  ]);
  svc.log.info("camera stream ended", { camera_id: stream.camera_id, reason, recorded, saved: videos.length === 1 });
  if (videos[0]) return { video: videos[0] };
  if (removed.length === 0) return { video: null, why: "already_ended" };
  return { video: null, why: recorded ? "no_room" : "not_recorded" };
}

/** What ending a stream outside D1 needs: its camera, its owner (the video link) and its broadcast and ingest stream. */
export type StreamToEnd = Pick<StreamRow, "camera_id" | "user_id" | "broadcast_id" | "stream_id">;

/**
 * Ends the stream of a product that was deleted (its row went with it, its ending was kept in
 * `camera_stream_endings`): the device is told to stop, the broadcast is completed on the platform,
 * where it stays as the recording, and the ingest stream is deleted. There is no product left to
 * save it to. The device is asked once, best effort (one that went away has stopped anyway); a
 * platform that cannot be reached throws, so that the ending is tried again.
 */
export async function endStreamOfDeletedProduct(svc: StreamServices, stream: StreamToEnd): Promise<void> {
  // In parallel: a device that does not answer must not hold up the broadcast's end, which keeps
  // the stream key valid on the owner's channel until it comes.
  const [, platform] = await Promise.allSettled([tellDeviceToStop(svc, stream), endOnPlatform(svc, stream)]);
  if (platform.status === "rejected") {
    svc.log.warn("stream of a deleted product not ended on the platform", {
      camera_id: stream.camera_id,
      error: (platform.reason as Error).message,
    });
    throw platform.reason;
  }
  svc.log.info("camera stream ended", { camera_id: stream.camera_id, reason: "product_deleted", recorded: platform.value, saved: false });
  // The row went with the product, so there is nothing left for the camera's object to watch.
  await relayObject(svc, stream.camera_id)
    .unwatchStream(stream.broadcast_id)
    .catch((error: unknown) => svc.log.warn("stream watch not dropped", { camera_id: stream.camera_id, error: (error as Error).message }));
}

/**
 * Tells the device to stop (when asked to: best effort, a device that went away has stopped
 * anyway), then ends the broadcast and deletes its ingest stream. Returns whether there is a
 * recording.
 */
async function endOnDeviceAndPlatform(svc: StreamServices, stream: StreamRow, tellDevice: boolean): Promise<boolean> {
  if (tellDevice) await tellDeviceToStop(svc, stream);
  return endOnPlatform(svc, stream);
}

async function tellDeviceToStop(svc: StreamServices, stream: StreamToEnd): Promise<void> {
  try {
    await relayCommand(svc, stream.camera_id, { method: "DELETE", path: "/streams/youtube" });
  } catch (error) {
    svc.log.warn("camera did not stop its stream", { camera_id: stream.camera_id, error: (error as Error).message });
  }
}

/** Ends the broadcast and deletes its ingest stream, whose key would otherwise stay valid on the owner's channel. */
async function endOnPlatform(svc: StreamServices, stream: StreamToEnd): Promise<boolean> {
  const account = videoAccount(svc, stream.user_id);
  const recorded = await endBroadcast(account, stream);
  await retireIngestStream(account, stream.stream_id);
  return recorded;
}

/** How a stop ended: the saved video, or why none was saved. */
export type StopOutcome = { video: VideoRow } | { video: null; why: "no_room" | "not_recorded" | "already_ended" };

/**
 * Completes the broadcast, and says whether there is a recording to keep. The platform refusing
 * the transition is normal when it already ended the broadcast by itself (auto-stop) or when the
 * broadcast never went live: its status then decides, and one that never went live is deleted.
 * A link gone meanwhile (403) ends the stream here without the platform. Only an unreachable
 * platform (503) is passed on, so the stop can be tried again.
 */
async function endBroadcast(account: VideoAccount, stream: StreamToEnd): Promise<boolean> {
  try {
    await completeBroadcast(account, stream.broadcast_id);
    return true;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 503) throw error;
    if (error.status === 403) return false;
  }
  const status = await broadcastStatus(account, stream.broadcast_id).catch(() => null);
  if (status === "complete") return true;
  if (status !== null) await removeLiveStream(account, stream.broadcast_id, null);
  return false;
}

/**
 * Ends every stream of an account about to be deleted, as the owner's stop would (broadcast
 * completed, ingest stream deleted, video saved while the products still exist): after the
 * deletion the grant is revoked and nothing could end them. Best effort, logged.
 */
export async function endStreamsOf(svc: StreamServices, userId: number): Promise<void> {
  const streams = await svc.db.all<StreamRow>(streamsWhere(svc.db, eq(cameraStreams.user_id, userId)));
  for (const stream of streams) {
    try {
      await stopStream(svc, stream, "owner");
    } catch (error) {
      svc.log.warn("stream of a deleted account not ended", { camera_id: stream.camera_id, error: (error as Error).message });
    }
  }
}
