import { createRoute, z } from "@hono/zod-openapi";
import { authenticate } from "../../../../../auth/authenticate";
import { SIGNED_IN } from "../../../../../lib/openapi";
import { problemResponses } from "../../../../../lib/problem";
import { ImageSchema } from "../../../../products/products.schemas";
import { CameraIdParamsSchema } from "../cameras.schemas";
import { RELAY_FAILURES } from "../cameras.routes";

const PREFIX = "/plugins/rpi-cam/cameras/{camera_id}";
const signedIn = { security: SIGNED_IN, middleware: [authenticate("required")], tags: ["Cameras"] };
const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const BINARY = { schema: { type: "string" as const, format: "binary" } };

export const CaptureBodySchema = z
  .strictObject({
    product_id: z.number().int().positive().openapi({ description: "Your base product or component the image goes to." }),
    description: z.string().max(500).optional(),
  })
  .openapi("CameraCapture", { example: { product_id: 42, description: "Top view, lid off" } });

export const CommandBodySchema = z
  .strictObject({
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path: z.string().min(1).max(512).startsWith("/"),
    params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    body: z.unknown().optional(),
  })
  .openapi("CameraCommand", { example: { method: "PATCH", path: "/camera/controls", body: { ExposureTime: 10_000 } } });

const CommandResultSchema = z
  .object({
    status: z.number().int().openapi({ description: "The device's own status for the command." }),
    content_type: z.string().nullable(),
    data: z.unknown(),
  })
  .openapi("CameraCommandResult");

const HlsParamsSchema = CameraIdParamsSchema.extend({
  path: z.string().min(1).max(256).openapi({ param: { name: "path", in: "path" }, example: "index.m3u8" }),
});

const StreamBodySchema = z
  .strictObject({
    product_id: z.number().int().positive(),
    title: z.string().max(100).optional(),
    description: z.string().max(5000).optional(),
    privacy_status: z.enum(["public", "private", "unlisted"]).default("private"),
  })
  .openapi("RecordingStreamStart");

export const captureImage = createRoute({
  ...signedIn,
  method: "post",
  path: `${PREFIX}/captures`,
  operationId: "captureCameraImage",
  summary: "Take a picture and store it on a product",
  description:
    "Relays `POST /captures` to the camera. The device takes the picture and uploads it itself (the bytes never travel through " +
    "the tunnel); the image goes through the same pipeline as any upload (sanitised, scanned, charged to your quota) and is " +
    `returned here, \`pending\` until its scan passes. Needs a verified account; your camera and your record only (404). ${RELAY_FAILURES}`,
  request: { params: CameraIdParamsSchema, body: json(CaptureBodySchema) },
  responses: {
    201: { description: "The stored image.", content: { "application/json": { schema: ImageSchema } } },
    ...problemResponses(401, 403, 404, 413, 415, 422, 502, 503),
  },
});

export const sendCommand = createRoute({
  ...signedIn,
  method: "post",
  path: `${PREFIX}/commands`,
  operationId: "sendCameraCommand",
  summary: "Relay a command to the camera's device API",
  description:
    "For the camera controls the other routes do not cover (`GET|PATCH /camera/controls`, `PUT /camera/focus`, " +
    "`POST /preview/start|stop`, `GET /camera`, ...). Only the allow-list of the device contract is relayed; anything else is 403 " +
    "`RELAY_COMMAND_NOT_ALLOWED` (`Relay command is not allowed.`). Answers 200 with the device's own status and data; a device " +
    `answer with binary content comes back as those bytes, with the device's content type and \`X-Camera-Status\`. ` +
    "Commands with a route of their own (`DELETE /pairing`, `POST /captures`, `/streams/youtube`) are 409 `RELAY_COMMAND_RESERVED`, " +
    "so their checks always apply. Reading (`GET`) needs a signed-in owner, anything else a verified account. Device-chosen content " +
    "types other than media, JSON and plain text are served as `application/octet-stream`, as an attachment. " +
    RELAY_FAILURES,
  request: { params: CameraIdParamsSchema, body: json(CommandBodySchema) },
  responses: {
    200: { description: "The device's answer.", content: { "application/json": { schema: CommandResultSchema }, "application/octet-stream": BINARY } },
    ...problemResponses(401, 403, 404, 409, 413, 415, 422, 502, 503),
  },
});

export const getHlsFile = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/hls/{path}`,
  operationId: "getCameraHlsFile",
  summary: "A file of the camera's live preview (HLS)",
  description:
    "Relays `GET /preview/hls/{path}` after `POST /preview/start`: the playlist (`index.m3u8`) and its segments. A path with a " +
    "`..` segment, a backslash or a control character, even percent-encoded, is never relayed (400 `INVALID_HLS_PATH`). " +
    "`{path}` is one path segment: encode `/` as `%2F` to reach a file in a sub-directory of the preview. " +
    `The device's 404 is 404 \`HLS_FILE_NOT_FOUND\`. ${RELAY_FAILURES}`,
  request: { params: HlsParamsSchema },
  responses: {
    200: {
      description: "The file.",
      content: { "application/vnd.apple.mpegurl": { schema: { type: "string" as const } }, "video/mp2t": BINARY },
    },
    ...problemResponses(400, 401, 404, 422, 502, 503),
  },
});

const STREAMING =
  "Live streaming to the video platform needs a linked `google-youtube` account, which this deployment cannot link yet: " +
  "starting a stream is 503 `STREAMING_UNAVAILABLE`, and there is never a current stream to read or stop (404).";

export const startRecordingStream = createRoute({
  ...signedIn,
  method: "post",
  path: `${PREFIX}/recording-stream`,
  operationId: "startCameraRecordingStream",
  summary: "Start a live stream to the video platform",
  description: `${STREAMING} Your camera only (404).`,
  request: { params: CameraIdParamsSchema, body: json(StreamBodySchema) },
  responses: { ...problemResponses(401, 403, 404, 413, 415, 422, 503) },
});

export const getRecordingStream = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/recording-stream`,
  operationId: "getCameraRecordingStream",
  summary: "The camera's current live stream",
  description: `${STREAMING} Your camera only (404).`,
  request: { params: CameraIdParamsSchema },
  responses: { ...problemResponses(401, 404, 422) },
});

export const stopRecordingStream = createRoute({
  ...signedIn,
  method: "delete",
  path: `${PREFIX}/recording-stream`,
  operationId: "stopCameraRecordingStream",
  summary: "Stop the camera's live stream and save it as a product video",
  description: `${STREAMING} Your camera only (404).`,
  request: { params: CameraIdParamsSchema },
  responses: { ...problemResponses(401, 404, 422) },
});
