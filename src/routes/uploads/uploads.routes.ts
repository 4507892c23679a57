import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";

const KeyParam = z.string().openapi({
  param: { name: "key", in: "path" },
  description: "The content key: the SHA-256 of the bytes in hex and the format's extension.",
  example: "3f2a9c0d5e8b7a6f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1.jpg",
});

const SERVED =
  "Content-addressed, so cached for a year as immutable (`ETag` too). `Range: bytes=a-b` (one range) answers 206 with " +
  "`Content-Range`, an unsatisfiable range 416. Sent with its own type and `X-Content-Type-Options: nosniff`. Anything " +
  "missing, not yet scanned or removed: 404 Problem Details (never a page).";

const binary = (type: string, description: string) => ({
  description,
  content: { [type]: { schema: z.string().openapi({ format: "binary" }) } },
});

export const getImage = createRoute({
  method: "get",
  path: "/uploads/images/{key}",
  operationId: "getUploadedImage",
  tags: ["Media"],
  summary: "Download an image",
  description: `Public. The sanitised image an image record's \`image_url\` names. ${SERVED}`,
  request: { params: z.object({ key: KeyParam }) },
  responses: {
    200: binary("image/*", "The image."),
    206: binary("image/*", "The requested range."),
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 416),
  },
});

export const getThumbnail = createRoute({
  method: "get",
  path: "/uploads/images/thumbnails/{width}/{key}",
  operationId: "getUploadedImageThumbnail",
  tags: ["Media"],
  summary: "Download an image's thumbnail",
  description:
    "Public. The thumbnail of the image `key` at `width` 200, 800 or 1600 (never wider than the image): JPEG, or PNG when the " +
    `image has transparency. Made on the media queue after the scan; until then 404, and \`thumbnail_url\` names the image itself. ${SERVED}`,
  request: {
    params: z.object({ width: z.string().openapi({ param: { name: "width", in: "path" }, example: "200" }), key: KeyParam }),
  },
  responses: {
    200: binary("image/*", "The thumbnail."),
    206: binary("image/*", "The requested range."),
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 416),
  },
});

export const getFile = createRoute({
  method: "get",
  path: "/uploads/files/{key}",
  operationId: "getUploadedFile",
  tags: ["Media"],
  summary: "Download a research file",
  description: `Public. The research file a file record's \`file_url\` names, as uploaded, with \`Content-Disposition: attachment\`. ${SERVED}`,
  request: { params: z.object({ key: KeyParam }) },
  responses: {
    // Any type: a research file is sent under the type it was uploaded with (application/octet-stream when it had none).
    200: binary("*/*", "The file."),
    206: binary("*/*", "The requested range."),
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 416),
  },
});
