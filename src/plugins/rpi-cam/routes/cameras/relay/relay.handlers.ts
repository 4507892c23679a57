import type { AppRouteHandler } from "../../../../../env";
import { requestOrigin } from "../../../../../lib/http";
import { ApiError, notFound } from "../../../../../lib/problem";
import { isoSeconds } from "../../../../../lib/time";
import { requireUser, requireVerified } from "../../../../../middleware/guards";
import { toImage, toVideo } from "../../../../../schemas/media";
import { readMediaItem } from "../../../../../services/media/media";
import { MAX_VIDEOS } from "../../../../../services/products/videos";
import { isSafeHlsPath } from "../../../protocol";
import { deviceRefused, relayCommand, relayObject } from "../../../services/camera-relay";
import { readStreamState } from "../../../services/camera-stream-state";
import { readStream, type StreamRow, startStream, stopStream, streamNotFound } from "../../../services/camera-streams";
import * as cameras from "../../../services/cameras";
import { watchUrl } from "../../../services/video-platform";
import type * as routes from "./relay.routes";

const protocolError = (detail: string) => new ApiError(502, { code: "CAMERA_PROTOCOL_ERROR", detail });

export const captureImage: AppRouteHandler<typeof routes.captureImage> = async (c) => {
  const user = requireVerified(c);
  const { camera_id } = c.req.valid("param");
  const { product_id, description } = c.req.valid("json");
  const svc = c.get("services");
  const { kind } = await cameras.readCaptureTarget(svc, user.id, camera_id, product_id);
  const answer = await relayCommand(c.get("services"), camera_id, {
    method: "POST",
    path: "/captures",
    body: { product_id, description: description ?? "" },
  });
  if (answer.status < 200 || answer.status > 299) throw deviceRefused(answer);
  const data = answer.data as { status?: unknown; image_id?: unknown } | null;
  if (data?.status !== "uploaded" || typeof data.image_id !== "string" || !/^[0-9a-f]{32}$/.test(data.image_id)) {
    throw protocolError("The camera's capture answer has no uploaded `image_id`.");
  }
  // The device uploaded to the record it was given; reading it there proves it.
  const parent = { id: product_id, kind, missing: cameras.productNotFound };
  const row = await readMediaItem(svc, parent, "images", data.image_id, () => user).catch(() => {
    throw protocolError("The camera named an image that is not on this record.");
  });
  const prefix = kind === "product" ? "/v1/products" : "/v1/components";
  c.header("Location", `${prefix}/${product_id}/images/${row.id}`);
  return c.json(toImage(row, requestOrigin(c)), 201);
};

/**
 * Commands with a route of their own, which applies checks `/commands` would skip: unpairing is
 * deleting the camera (so device and service agree), captures check the record and need a verified
 * account, streams need the linked video account.
 */
const RESERVED: ReadonlyArray<{ test: (method: string, path: string) => boolean; route: string }> = [
  { test: (method, path) => method === "DELETE" && path === "/pairing", route: "DELETE /v1/plugins/rpi-cam/cameras/{camera_id}" },
  { test: (method, path) => method === "POST" && path === "/captures", route: "POST /v1/plugins/rpi-cam/cameras/{camera_id}/captures" },
  { test: (_method, path) => path === "/streams/youtube", route: "/v1/plugins/rpi-cam/cameras/{camera_id}/recording-stream" },
];

/** Device-chosen content types passed on as they are; anything else (HTML, SVG...) is served as bytes. */
const PASSED_TYPES = new Set([
  "application/vnd.apple.mpegurl",
  "application/x-mpegurl",
  "video/mp2t",
  "video/mp4",
  "video/iso.segment",
  "image/jpeg",
  "image/png",
  "image/webp",
  "application/json",
  "text/plain",
]);

/** Headers of bytes the device sent, served from the API's origin: never rendered as a page. */
function deviceBytesHeaders(contentType: string | null, fallback: string): Record<string, string> {
  const essence = contentType?.split(";")[0]!.trim().toLowerCase() ?? "";
  return {
    "Content-Type": PASSED_TYPES.has(essence) ? essence : fallback,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "no-store",
  };
}

export const sendCommand: AppRouteHandler<typeof routes.sendCommand> = async (c) => {
  const command = c.req.valid("json");
  // Reading the camera is a read; changing it is a write, which needs a verified account.
  const user = command.method === "GET" ? requireUser(c) : requireVerified(c);
  const { camera_id } = c.req.valid("param");
  await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  const reserved = RESERVED.find((entry) => entry.test(command.method, command.path));
  if (reserved) {
    throw new ApiError(409, {
      code: "RELAY_COMMAND_RESERVED",
      detail: `This command has its own route, with its own checks: use ${reserved.route}.`,
    });
  }
  const answer = await relayCommand(c.get("services"), camera_id, command);
  c.header("Cache-Control", "no-store");
  if (answer.binary) {
    return new Response(answer.binary, {
      headers: {
        ...deviceBytesHeaders(answer.contentType, "application/octet-stream"),
        "Content-Disposition": "attachment",
        "X-Camera-Status": String(answer.status),
      },
    });
  }
  return c.json({ status: answer.status, content_type: answer.contentType, data: answer.data }, 200);
};

export const getHlsFile: AppRouteHandler<typeof routes.getHlsFile> = async (c) => {
  const user = requireUser(c);
  const { camera_id, path } = c.req.valid("param");
  await cameras.readOwnedCamera(c.get("services"), user.id, camera_id);
  if (!isSafeHlsPath(path)) {
    throw new ApiError(400, {
      code: "INVALID_HLS_PATH",
      detail: "HLS paths name a file of the preview; `..`, backslashes and control characters are refused.",
    });
  }
  const devicePath = `/preview/hls/${path.split("/").map(encodeURIComponent).join("/")}`;
  const answer = await relayCommand(c.get("services"), camera_id, { method: "GET", path: devicePath });
  if (answer.status === 404) throw notFound("The camera has no such preview file (is the preview started?).", "HLS_FILE_NOT_FOUND");
  if (answer.status < 200 || answer.status > 299) throw deviceRefused(answer);
  const body = answer.binary ?? (typeof answer.data === "string" ? answer.data : null);
  if (body === null) throw protocolError("The camera's HLS answer carried no file.");
  return new Response(body, {
    headers: deviceBytesHeaders(answer.contentType, path.endsWith(".m3u8") ? "application/vnd.apple.mpegurl" : "video/mp2t"),
  });
};

function toStream(row: StreamRow) {
  return {
    camera_id: row.camera_id,
    product_id: row.product_id,
    broadcast_id: row.broadcast_id,
    title: row.title,
    description: row.description,
    privacy_status: row.privacy_status,
    watch_url: watchUrl(row.broadcast_id),
    started_at: isoSeconds(row.started_at * 1000),
  };
}

export const startRecordingStream: AppRouteHandler<typeof routes.startRecordingStream> = async (c) => {
  const user = requireVerified(c);
  const { camera_id } = c.req.valid("param");
  const body = c.req.valid("json");
  const row = await startStream(c.get("services"), user.id, camera_id, {
    productId: body.product_id,
    title: body.title ?? `Teardown stream ${isoSeconds(c.get("services").clock.now())}`,
    description: body.description ?? null,
    privacyStatus: body.privacy_status,
  });
  await relayObject(c.get("services"), camera_id).watchStream(camera_id, row.broadcast_id);
  c.header("Location", `/v1/plugins/rpi-cam/cameras/${camera_id}/recording-stream`);
  return c.json(toStream(row), 201);
};

export const getRecordingStream: AppRouteHandler<typeof routes.getRecordingStream> = async (c) => {
  const user = requireUser(c);
  const { camera_id } = c.req.valid("param");
  const state = await readStreamState(c.get("services"), user.id, camera_id);
  c.header("Cache-Control", "no-store");
  return c.json({ ...toStream(state.stream), platform_status: state.platformStatus, device: state.device }, 200);
};

export const stopRecordingStream: AppRouteHandler<typeof routes.stopRecordingStream> = async (c) => {
  const user = requireVerified(c);
  const { camera_id } = c.req.valid("param");
  const svc = c.get("services");
  const row = await readStream(svc, user.id, camera_id);
  const outcome = await stopStream(svc, row, "owner");
  await relayObject(svc, camera_id).unwatchStream(row.broadcast_id);
  if (outcome.video) return c.json(toVideo(outcome.video), 200);
  if (outcome.why === "already_ended") throw streamNotFound();
  if (outcome.why === "not_recorded") {
    throw new ApiError(409, {
      code: "STREAM_NOT_RECORDED",
      detail: "The stream ended without ever going live, so there was nothing to save.",
    });
  }
  throw new ApiError(409, {
    code: "VIDEO_LIMIT_REACHED",
    detail: `The stream ended, but the product already holds ${MAX_VIDEOS} videos, so it was not saved; it stays at ${watchUrl(row.broadcast_id)}.`,
  });
};
