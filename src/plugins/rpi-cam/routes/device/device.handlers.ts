import { z } from "@hono/zod-openapi";
import type { AppRouteHandler } from "../../../../env";
import { requestOrigin } from "../../../../lib/http";
import { imageDimensions, sniffImageFormat } from "../../../../lib/images/formats";
import { MULTIPART_ALLOWANCE_BYTES, readLimitedForm } from "../../../../lib/multipart";
import { ApiError } from "../../../../lib/problem";
import { multilineText } from "../../../../lib/text";
import { validationError } from "../../../../lib/validation";
import { storeUpload } from "../../../../services/media/intake";
import { assertWithinQuota } from "../../../../services/media/media";
import { uploadUrl } from "../../../../services/media/records";
import { fileCap, jsonObjectField, parseUploadForm, prepareImage, tooLargeDetail } from "../../../../services/media/upload";
import { retireCamera } from "../../services/camera-relay";
import * as cameras from "../../services/cameras";
import { verifyDeviceAssertion } from "../../services/device-assertion";
import type * as routes from "./device.routes";

const UploadMetadataSchema = z.strictObject({
  product_id: z.number().int().positive(),
  description: multilineText().max(500).optional(),
});

/** Preview thumbnails are small by nature: 1 MiB and 4 megapixels at most. */
const PREVIEW_MAX_BYTES = 1024 * 1024;
const PREVIEW_MAX_PIXELS = 4_000_000;
const PREVIEW_TYPES = { jpeg: "image/jpeg", png: "image/png", webp: "image/webp" } as const;

const device = (c: Parameters<AppRouteHandler<typeof routes.unpairSelf>>[0], cameraId: string) =>
  verifyDeviceAssertion(c.get("services"), c.req.header("authorization"), cameraId);

export const uploadImage: AppRouteHandler<typeof routes.uploadImage> = async (c) => {
  const { camera_id } = c.req.valid("param");
  const camera = await device(c, camera_id);
  const cap = fileCap("images", camera.ownerRole);
  const form = await readLimitedForm(c.req.raw, cap + MULTIPART_ALLOWANCE_BYTES, tooLargeDetail("images", camera.ownerRole, cap));
  const parsed = UploadMetadataSchema.safeParse(jsonObjectField(form, "upload_metadata") ?? undefined);
  if (!parsed.success) {
    throw validationError(
      "json",
      parsed.error.issues.map((issue) => ({ ...issue, path: ["upload_metadata", ...issue.path] })),
    );
  }
  const fields = { ...parseUploadForm(form, "images"), metadata: jsonObjectField(form, "capture_metadata") };
  fields.description = parsed.data.description?.trim() || null;

  const svc = c.get("services");
  const { kind, target } = await cameras.readDeviceUploadTarget(svc, camera.ownerId, parsed.data.product_id);
  const prepared = await prepareImage(fields, camera.ownerRole);
  assertWithinQuota(target, prepared.bytes.length);
  const parent = { id: parsed.data.product_id, kind, missing: cameras.productNotFound };
  const row = await storeUpload(svc, parent, "images", prepared, camera.ownerId);
  c.get("log").info("camera image uploaded", { camera_id, media_id: row.id });
  return c.json({ image_id: row.id, image_url: uploadUrl(requestOrigin(c), "images", row.storage_key) }, 201);
};

export const uploadPreviewThumbnail: AppRouteHandler<typeof routes.uploadPreviewThumbnail> = async (c) => {
  const { camera_id } = c.req.valid("param");
  await device(c, camera_id);
  const form = await readLimitedForm(c.req.raw, PREVIEW_MAX_BYTES + MULTIPART_ALLOWANCE_BYTES, "A preview thumbnail is at most 1 MiB.");
  const { file } = parseUploadForm(form, "images");
  if (file.size > PREVIEW_MAX_BYTES)
    throw new ApiError(413, { code: "PAYLOAD_TOO_LARGE", detail: "A preview thumbnail is at most 1 MiB." });
  const bytes = new Uint8Array(await file.arrayBuffer());
  const format = sniffImageFormat(bytes);
  if (format !== "jpeg" && format !== "png" && format !== "webp") {
    throw new ApiError(415, { code: "UNSUPPORTED_MEDIA_TYPE", detail: "A preview thumbnail is a JPEG, PNG or WebP image." });
  }
  const size = imageDimensions(bytes, format);
  if (!size || size.width * size.height > PREVIEW_MAX_PIXELS) {
    throw new ApiError(422, { code: "INVALID_PREVIEW_THUMBNAIL", detail: "The preview thumbnail is unreadable or over 4 megapixels." });
  }
  await c
    .get("services")
    .bindings.UPLOADS.put(cameras.previewThumbnailKey(camera_id), bytes, { httpMetadata: { contentType: PREVIEW_TYPES[format] } });
  return c.body(null, 204);
};

export const unpairSelf: AppRouteHandler<typeof routes.unpairSelf> = async (c) => {
  const { camera_id } = c.req.valid("param");
  await device(c, camera_id);
  await cameras.deleteCamera(c.get("services"), camera_id, null);
  await retireCamera(c.get("services"), camera_id, false);
  c.get("log").info("camera deleted", { camera_id, by: "device" });
  return c.body(null, 204);
};
