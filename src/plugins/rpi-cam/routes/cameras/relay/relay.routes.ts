import { createRoute, z } from "@hono/zod-openapi";
import { FREE_FORM_JSON_BOUNDS, freeFormValue, withinJsonBounds } from "../../../../../lib/json-bounds";
import { SIGNED_IN } from "../../../../../lib/openapi";
import { problemResponses } from "../../../../../lib/problem";
import { multilineText, singleLineText } from "../../../../../lib/text";
import { authenticate } from "../../../../../middleware/authenticate";
import { ImageSchema, VideoSchema } from "../../../../../schemas/media";
import { RELAY_FAILURES } from "../cameras.routes";
import { CameraIdParamsSchema } from "../cameras.schemas";

const PREFIX = "/plugins/rpi-cam/cameras/{camera_id}";
const signedIn = { security: SIGNED_IN, middleware: [authenticate("required")], tags: ["Cameras"] };
const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const BINARY = { schema: { type: "string" as const, format: "binary" } };

// A command's size is bounded by the tunnel frame it travels in (413 `RELAY_COMMAND_TOO_LARGE`).
const COMMAND_JSON_BOUNDS = { ...FREE_FORM_JSON_BOUNDS, bytes: Number.POSITIVE_INFINITY };
const COMMAND_JSON_RULE =
  `At most ${COMMAND_JSON_BOUNDS.depth} levels of nesting and ${COMMAND_JSON_BOUNDS.keys} keys in all (422 at the member); ` +
  "the whole command must fit one 64 KiB tunnel frame (413 `RELAY_COMMAND_TOO_LARGE`).";

export const CaptureBodySchema = z
  .strictObject({
    product_id: z.number().int().positive().openapi({ description: "Your base product or component the image goes to." }),
    description: multilineText().max(500).optional(),
  })
  .openapi("CameraCapture", { example: { product_id: 42, description: "Top view, lid off" } });

export const CommandBodySchema = z
  .strictObject({
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path: singleLineText().min(1).max(512).startsWith("/"),
    params: withinJsonBounds(z.record(z.string(), z.union([singleLineText(), z.number(), z.boolean()])), COMMAND_JSON_BOUNDS)
      .optional()
      .openapi({ description: `Query parameters for the device. ${COMMAND_JSON_RULE}` }),
    body: freeFormValue(COMMAND_JSON_BOUNDS)
      .optional()
      .openapi({ description: `The JSON body for the device. ${COMMAND_JSON_RULE}` }),
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
  path: z
    .string()
    .min(1)
    .max(256)
    .openapi({ param: { name: "path", in: "path" }, example: "index.m3u8" }),
});

const StreamBodySchema = z
  .strictObject({
    product_id: z.number().int().positive(),
    title: singleLineText().max(100).optional(),
    description: multilineText().max(5000).optional(),
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
    200: {
      description: "The device's answer.",
      content: { "application/json": { schema: CommandResultSchema }, "application/octet-stream": BINARY },
    },
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

const RecordingStreamSchema = z
  .object({
    camera_id: z.string(),
    product_id: z.number().int(),
    broadcast_id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    privacy_status: z.enum(["public", "private", "unlisted"]),
    watch_url: z.string().openapi({ description: "Where viewers watch the broadcast." }),
    started_at: z.string(),
    platform_status: z.string().nullable().optional().openapi({
      description:
        "GET only: the broadcast's life-cycle status on the platform (`ready`, `live`, `complete`...), read from the platform at most once every 30 s; null when it could not be asked.",
    }),
    device: z.record(z.string(), z.unknown()).nullable().optional().openapi({
      description:
        "GET only: the device's own stream state (`streaming`, `broadcast_id`, `started_at`, `fps`, `bitrate_kbps`, `dropped_frames`), null when it cannot be asked.",
    }),
  })
  .openapi("RecordingStream", { description: "A camera's live stream. The stream key is never part of it." });

const STREAMS =
  "Live streaming to YouTube through the owner's linked `google-youtube` account (POST /v1/oauth/google-youtube/associate/authorize). Your camera only (404).";

export const startRecordingStream = createRoute({
  ...signedIn,
  method: "post",
  path: `${PREFIX}/recording-stream`,
  operationId: "startCameraRecordingStream",
  summary: "Start a live stream to the video platform",
  description:
    `${STREAMS} Creates a broadcast and a stream on the platform and hands the ingest address and key to the device ` +
    "(`POST /streams/youtube`). Refusals, checked before anything is created: no linked video account 403 `VIDEO_ACCOUNT_NOT_LINKED`; " +
    "another's product or a component 404; a product with 5 videos 409 `VIDEO_LIMIT_REACHED`; a camera already streaming 409 " +
    "`STREAM_ALREADY_RUNNING`; the camera offline 503. The platform refusing is 502 `VIDEO_PLATFORM_REFUSED`, not answering 503 " +
    "`VIDEO_PLATFORM_UNAVAILABLE`; a device that cannot start leaves nothing behind on the platform. A stream whose device is gone for 5 " +
    "minutes ends by itself and is saved as a video.",
  request: { params: CameraIdParamsSchema, body: json(StreamBodySchema) },
  responses: {
    201: { description: "Streaming.", content: { "application/json": { schema: RecordingStreamSchema } } },
    ...problemResponses(401, 403, 404, 409, 413, 415, 422, 502, 503),
  },
});

export const getRecordingStream = createRoute({
  ...signedIn,
  method: "get",
  path: `${PREFIX}/recording-stream`,
  operationId: "getCameraRecordingStream",
  summary: "The camera's current live stream",
  description: `${STREAMS} With the platform's and the device's view of it; no stream: 404 \`RECORDING_STREAM_NOT_FOUND\`.`,
  request: { params: CameraIdParamsSchema },
  responses: {
    200: { description: "The stream.", content: { "application/json": { schema: RecordingStreamSchema } } },
    ...problemResponses(401, 404, 422),
  },
});

export const stopRecordingStream = createRoute({
  ...signedIn,
  method: "delete",
  path: `${PREFIX}/recording-stream`,
  operationId: "stopCameraRecordingStream",
  summary: "Stop the camera's live stream and save it as a product video",
  description:
    `${STREAMS} Stops the device (\`DELETE /streams/youtube\`; a device that is gone has stopped anyway), ends the broadcast, and saves it ` +
    "as a video of the product (`{url, title, description, video_metadata}`), answered here. If the product filled up to 5 videos " +
    "meanwhile the stream still ends: 409 `VIDEO_LIMIT_REACHED` names the broadcast's URL; one that never went live ends with " +
    "409 `STREAM_NOT_RECORDED`; a concurrent stop that already ended it: 404.",
  request: { params: CameraIdParamsSchema },
  responses: {
    200: { description: "The saved video.", content: { "application/json": { schema: VideoSchema } } },
    ...problemResponses(401, 404, 409, 422, 502, 503),
  },
});
