import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../../lib/openapi";
import { PageQuerySchema, pagedSchema } from "../../../../lib/pagination";
import { problemResponses } from "../../../../lib/problem";
import { authenticate } from "../../../../middleware/authenticate";
import {
  CameraDetailSchema,
  CameraIdParamsSchema,
  CameraReadQuerySchema,
  CameraSchema,
  CameraStatusSchema,
  CameraUpdateSchema,
  LocalAccessSchema,
  TelemetrySchema,
} from "./cameras.schemas";

const PREFIX = "/plugins/rpi-cam/cameras";
const OWNER_ONLY = "Your own cameras only: anyone else's camera id is 404.";
/** The relay failures every route that talks to the device can meet. */
export const RELAY_FAILURES =
  "The device is reached through its tunnel: no live heartbeat is 503 `CAMERA_OFFLINE` at once, no answer within 30 s 503 " +
  "`CAMERA_TIMEOUT`, an error answer from the device 502 `CAMERA_COMMAND_FAILED`.";
const signedIn = { security: SIGNED_IN, middleware: [authenticate("required")], tags: ["Cameras"] };
const ok = <T extends z.ZodType>(description: string, schema: T) => ({ description, content: { "application/json": { schema } } });

export const listCameras = createRoute({
  ...signedIn,
  method: "get",
  path: PREFIX,
  operationId: "listCameras",
  summary: "List your cameras",
  description: "Your paired cameras, oldest first, paged.",
  request: { query: z.strictObject({ ...PageQuerySchema.shape }) },
  responses: { 200: ok("One page of cameras.", pagedSchema(CameraSchema, "CameraPage")), ...problemResponses(401, 422) },
});

export const getCamera = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/{camera_id}`,
  operationId: "getCamera",
  summary: "Read one of your cameras",
  description: `${OWNER_ONLY} \`include_status\` adds the tunnel's state; \`include_telemetry\` asks the device (null when it is offline or does not answer).`,
  request: { params: CameraIdParamsSchema, query: CameraReadQuerySchema },
  responses: { 200: ok("The camera.", CameraDetailSchema), ...problemResponses(401, 404, 422) },
});

export const updateCamera = createRoute({
  ...signedIn,
  method: "patch",
  path: `${PREFIX}/{camera_id}`,
  operationId: "updateCamera",
  summary: "Rename or redescribe a camera",
  description: `Members left out stay. ${OWNER_ONLY} Changing needs a verified email address (403 \`EMAIL_NOT_VERIFIED\`).`,
  request: { params: CameraIdParamsSchema, body: { required: true, content: { "application/json": { schema: CameraUpdateSchema } } } },
  responses: { 200: ok("The camera.", CameraSchema), ...problemResponses(401, 403, 404, 413, 415, 422) },
});

export const deleteCamera = createRoute({
  ...signedIn,
  method: "delete",
  path: `${PREFIX}/{camera_id}`,
  operationId: "deleteCamera",
  summary: "Unpair and delete a camera",
  description:
    `${OWNER_ONLY} Needs a verified email address (403 \`EMAIL_NOT_VERIFIED\`). The camera's key is forgotten at once, so its assertions are refused from then on; a connected device is ` +
    "told to unpair (`DELETE /pairing`) and its tunnel closed.",
  request: { params: CameraIdParamsSchema },
  responses: { 204: { description: "Deleted." }, ...problemResponses(401, 403, 404, 422) },
});

export const getCameraStatus = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/{camera_id}/status`,
  operationId: "getCameraStatus",
  summary: "Whether a camera is connected",
  description: `\`online\` while its tunnel is open with a heartbeat under 90 s old. ${OWNER_ONLY}`,
  request: { params: CameraIdParamsSchema },
  responses: { 200: ok("The tunnel's state.", CameraStatusSchema), ...problemResponses(401, 404, 422) },
});

export const getCameraTelemetry = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/{camera_id}/telemetry`,
  operationId: "getCameraTelemetry",
  summary: "The device's telemetry",
  description: `Relays \`GET /system/telemetry\` and returns what the device reports. ${OWNER_ONLY} ${RELAY_FAILURES}`,
  request: { params: CameraIdParamsSchema },
  responses: { 200: ok("The telemetry.", TelemetrySchema), ...problemResponses(401, 404, 422, 502, 503) },
});

export const getCameraLocalAccess = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/{camera_id}/local-access`,
  operationId: "getCameraLocalAccess",
  summary: "Bootstrap direct access on the local network",
  description:
    "Relays `GET /system/local-access`: the device's local addresses and its device-local key, which the app then sends as " +
    `\`X-API-Key\` to the device directly (never to this service). Sent with \`Cache-Control: no-store\`. ${OWNER_ONLY} ${RELAY_FAILURES}`,
  request: { params: CameraIdParamsSchema },
  responses: { 200: ok("How to reach the device locally.", LocalAccessSchema), ...problemResponses(401, 404, 422, 502, 503) },
});

export const getCameraPreviewThumbnail = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/{camera_id}/preview-thumbnail`,
  operationId: "getCameraPreviewThumbnail",
  summary: "The camera's latest preview thumbnail",
  description: `The small JPEG the device last uploaded as its preview; 404 \`PREVIEW_THUMBNAIL_NOT_FOUND\` before the first. ${OWNER_ONLY}`,
  request: { params: CameraIdParamsSchema },
  responses: {
    200: { description: "The thumbnail.", content: { "image/jpeg": { schema: { type: "string" as const, format: "binary" } } } },
    ...problemResponses(401, 404, 422),
  },
});
