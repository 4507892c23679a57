import { createRoute, z } from "@hono/zod-openapi";
import { CameraIdParamsSchema } from "../cameras/cameras.schemas";

// The device's callbacks: the private device contract (docs/camera.md), authenticated with
// device assertions and kept out of the REST schema (spec, Versioning 5). The multipart bodies
// are parsed by the handlers, so each refusal names its field.

const multipart = { required: true, content: { "multipart/form-data": { schema: { type: "object" as const } } } };

export const uploadImage = createRoute({
  method: "post",
  path: "/plugins/rpi-cam/device/cameras/{camera_id}/image-upload",
  hide: true,
  request: { params: CameraIdParamsSchema, body: multipart },
  responses: {
    201: { description: "Stored.", content: { "application/json": { schema: z.object({ image_id: z.string(), image_url: z.string() }) } } },
  },
});

export const uploadPreviewThumbnail = createRoute({
  method: "post",
  path: "/plugins/rpi-cam/device/cameras/{camera_id}/preview-thumbnail-upload",
  hide: true,
  request: { params: CameraIdParamsSchema, body: multipart },
  responses: { 204: { description: "Stored." } },
});

export const unpairSelf = createRoute({
  method: "delete",
  path: "/plugins/rpi-cam/device/cameras/{camera_id}/self",
  hide: true,
  request: { params: CameraIdParamsSchema },
  responses: { 204: { description: "Unpaired." } },
});
