import type { Context } from "hono";
import type { AppEnv, AppRouteHandler } from "../../../../env";
import { pageEnvelope } from "../../../../lib/pagination";
import { ApiError, notFound } from "../../../../lib/problem";
import { requireUser, requireVerified } from "../../../../middleware/guards";
import { relayForData, retireCamera, tunnelStatus } from "../../services/camera-relay";
import { readStream, type StreamRow, stopStream } from "../../services/camera-streams";
import * as cameras from "../../services/cameras";
import type * as routes from "./cameras.routes";
import { LocalAccessSchema, toCamera, toStatus } from "./cameras.schemas";

/** Telemetry for the detail read: null when the device cannot give it (offline, slow, failing); a bug is still a 500. */
async function telemetryOrNull(c: Context<AppEnv>, cameraId: string): Promise<Record<string, unknown> | null> {
  try {
    return await relayForData(c.get("services"), cameraId, { method: "GET", path: "/system/telemetry" });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    c.get("log").info("camera telemetry unavailable", { camera_id: cameraId, code: error.code });
    return null;
  }
}

/** A camera deleted mid-stream: its broadcast is ended and saved first, as the owner's stop would (best effort). */
async function endStreamBeforeDeletion(c: Context<AppEnv>, userId: number, cameraId: string): Promise<void> {
  const svc = c.get("services");
  let stream: StreamRow;
  try {
    stream = await readStream(svc, userId, cameraId);
  } catch {
    return; // No stream (or not the caller's camera: the deletion says 404).
  }
  try {
    await stopStream(svc, stream, "owner");
  } catch (error) {
    c.get("log").warn("stream of a deleted camera not ended", { camera_id: cameraId, error: (error as Error).message });
  }
}

export const listCameras: AppRouteHandler<typeof routes.listCameras> = async (c) => {
  const user = requireUser(c);
  const page = c.req.valid("query");
  const found = await cameras.listCameras(c.get("services"), user.id, page);
  c.header("Cache-Control", "no-store");
  return c.json(pageEnvelope(found.rows.map(toCamera), found.total, page), 200);
};

export const getCamera: AppRouteHandler<typeof routes.getCamera> = async (c) => {
  const user = requireUser(c);
  const { camera_id } = c.req.valid("param");
  const { include_status, include_telemetry } = c.req.valid("query");
  const row = await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  const [status, telemetry] = await Promise.all([
    include_status ? tunnelStatus(c.get("services"), camera_id) : undefined,
    include_telemetry ? telemetryOrNull(c, camera_id) : undefined,
  ]);
  c.header("Cache-Control", "no-store");
  return c.json(
    {
      ...toCamera(row),
      ...(status ? { status: toStatus(status, row) } : {}),
      ...(telemetry !== undefined ? { telemetry } : {}),
    },
    200,
  );
};

export const updateCamera: AppRouteHandler<typeof routes.updateCamera> = async (c) => {
  const user = requireVerified(c);
  const { camera_id } = c.req.valid("param");
  const row = await cameras.updateCamera(c.get("services"), user.id, camera_id, c.req.valid("json"));
  return c.json(toCamera(row), 200);
};

export const deleteCamera: AppRouteHandler<typeof routes.deleteCamera> = async (c) => {
  const user = requireVerified(c);
  const { camera_id } = c.req.valid("param");
  await endStreamBeforeDeletion(c, user.id, camera_id);
  await cameras.deleteCamera(c.get("services"), camera_id, user.id);
  await retireCamera(c.get("services"), camera_id, true);
  c.get("log").info("camera deleted", { camera_id, user_id: user.id, by: "owner" });
  return c.body(null, 204);
};

export const getCameraStatus: AppRouteHandler<typeof routes.getCameraStatus> = async (c) => {
  const user = requireUser(c);
  const { camera_id } = c.req.valid("param");
  const row = await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  const status = await tunnelStatus(c.get("services"), camera_id);
  c.header("Cache-Control", "no-store");
  return c.json(toStatus(status, row), 200);
};

export const getCameraTelemetry: AppRouteHandler<typeof routes.getCameraTelemetry> = async (c) => {
  const user = requireUser(c);
  const { camera_id } = c.req.valid("param");
  await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  const telemetry = await relayForData(c.get("services"), camera_id, { method: "GET", path: "/system/telemetry" });
  c.header("Cache-Control", "no-store");
  return c.json(telemetry, 200);
};

export const getCameraLocalAccess: AppRouteHandler<typeof routes.getCameraLocalAccess> = async (c) => {
  const user = requireUser(c);
  const { camera_id } = c.req.valid("param");
  await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  const data = await relayForData(c.get("services"), camera_id, { method: "GET", path: "/system/local-access" });
  const parsed = LocalAccessSchema.safeParse({ header_name: "X-API-Key", api_key: data.api_key, local_urls: data.local_urls ?? [] });
  if (!parsed.success) {
    throw new ApiError(502, { code: "CAMERA_PROTOCOL_ERROR", detail: "The camera's local-access answer lacks `api_key` or `local_urls`." });
  }
  c.header("Cache-Control", "no-store");
  return c.json(parsed.data, 200);
};

export const getCameraPreviewThumbnail: AppRouteHandler<typeof routes.getCameraPreviewThumbnail> = async (c) => {
  const user = requireUser(c);
  const { camera_id } = c.req.valid("param");
  await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  const object = await c.get("services").bindings.UPLOADS.get(cameras.previewThumbnailKey(camera_id));
  if (!object) throw notFound("The camera has not uploaded a preview thumbnail yet.", "PREVIEW_THUMBNAIL_NOT_FOUND");
  return new Response(object.body, {
    headers: {
      "Content-Type": object.httpMetadata?.contentType ?? "image/jpeg",
      "Content-Length": String(object.size),
      "Cache-Control": "private, no-store",
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "default-src 'none'; sandbox",
    },
  });
};
