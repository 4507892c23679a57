import { createRoute, z } from "@hono/zod-openapi";
import { RESEARCH_FILE_EXTENSIONS } from "../../../lib/file-formats";
import { FREE_FORM_JSON_RULE } from "../../../lib/json-bounds";
import { SIGNED_IN } from "../../../lib/openapi";
import { PageQuerySchema, pagedSchema } from "../../../lib/pagination";
import { problemResponses } from "../../../lib/problem";
import { authenticate, authenticateCarried } from "../../../middleware/authenticate";
import { FileSchema, ImageSchema } from "../../../schemas/media";
import { IdParamsSchema } from "../../../schemas/params";
import { MAX_RESEARCH_FILE_BYTES, ROLE_LIMITS } from "../../../services/media/quotas";
import type { MediaKind } from "../../../services/media/storage";
import { MAX_IMAGE_METADATA_CHARS, MAX_MEDIA_DESCRIPTION } from "../../../services/media/upload";
import type { RecordKind } from "../../../services/products/records";

/** Path parameters of one media item: the record id and the 32-hex media id (anything else is 422). */
const mediaParams = (name: "image_id" | "file_id") =>
  IdParamsSchema.extend({
    [name]: z
      .string()
      .regex(/^[0-9a-f]{32}$/, "Must be 32 lowercase hex characters.")
      .openapi({ param: { name, in: "path" }, example: "9f86d081884c7d659a2feaa0c55ad015" }),
  });

export const ImageParamsSchema = mediaParams("image_id");
export const FileParamsSchema = mediaParams("file_id");

const MediaPageQuerySchema = z.strictObject({ ...PageQuerySchema.shape });
const ImagePageSchema = pagedSchema(ImageSchema, "ImagePage");
const FilePageSchema = pagedSchema(FileSchema, "ResearchFilePage");

const { contributor, lab } = ROLE_LIMITS;
const MIB = 1024 * 1024;

/** The multipart body, documented as OpenAPI; the handler parses it itself so each refusal is precise (not a zod schema, so no validator runs). */
const uploadBody = (media: MediaKind) => ({
  required: true,
  content: {
    "multipart/form-data": {
      schema: {
        type: "object" as const,
        required: ["file"],
        properties: {
          file: {
            type: "string" as const,
            format: "binary",
            description:
              media === "images"
                ? "The image: .jpg/.jpeg, .png, .gif, .webp or .bmp; the part's type must be the format's (image/jpeg...) and the bytes must be that format."
                : `The research file: ${RESEARCH_FILE_EXTENSIONS.map((e) => `.${e}`).join(", ")}; the part's type must fit the extension (or be application/octet-stream) and the bytes must carry the format's signature where it has one.`,
          },
          description: {
            type: "string" as const,
            maxLength: MAX_MEDIA_DESCRIPTION,
            description: "No control characters other than tab, line feed and carriage return (422 at `/description`).",
          },
          ...(media === "images"
            ? {
                image_metadata: {
                  type: "string" as const,
                  maxLength: MAX_IMAGE_METADATA_CHARS,
                  description:
                    "A JSON object as text, stored as the image's `image_metadata`. Its `exif` member is reserved: the capture parameters kept from the file's EXIF go there. " +
                    FREE_FORM_JSON_RULE,
                },
              }
            : {}),
        },
      },
    },
  },
});

const PREFIX = { product: "/products", component: "/components" } as const;
const NAME = { product: "Product", component: "Component" } as const;
const NOUN = { product: "base product", component: "component" } as const;
const OTHER = { product: "a component id", component: "a base product id" } as const;
const ITEM = {
  images: { name: "Image", noun: "image", param: "image_id" },
  files: { name: "File", noun: "research file", param: "file_id" },
} as const;

const UPLOAD_RULES: Record<MediaKind, string> = {
  images:
    `Caps follow the uploader's role: ${contributor.imageUploadMaxBytes / MIB} MiB and ${contributor.imageUploadMaxPixels} px (contributor), ` +
    `${lab.imageUploadMaxBytes / MIB} MiB and ${lab.imageUploadMaxPixels} px (lab). Over the size: 413 (refused by \`Content-Length\` before the body is read); ` +
    'over the pixels: 400 `IMAGE_TOO_MANY_PIXELS` ("Image has N pixels, exceeding the maximum allowed M."; GIF and WebP, which are ' +
    "decoded whole, at most 1,500,000 px for every role). Extension, declared type and bytes disagreeing: 415 `MEDIA_TYPE_MISMATCH`; " +
    "another format, or a variant no decoder here reads (RLE or otherwise compressed BMP; lossless, hierarchical, arithmetic-coded, " +
    "12-bit or CMYK JPEG): 415 `UNSUPPORTED_MEDIA_TYPE`; a broken file or one with data after its end " +
    "(a polyglot): 422 `IMAGE_UNREADABLE`. Before storage the pixels are turned upright per the EXIF orientation and the metadata is reduced to " +
    "the EXIF allow-list (camera and lens, exposure, focal length, ISO, white balance, capture time): GPS, maker notes, serial numbers, XMP, " +
    "IPTC, comments and PNG text are removed.",
  files:
    `Needs the \`lab\` role (403 \`LAB_ROLE_REQUIRED\`). At most ${MAX_RESEARCH_FILE_BYTES / MIB} MiB (413). Extension, declared type and ` +
    "signature disagreeing: 415 `MEDIA_TYPE_MISMATCH`; another extension: 415 `UNSUPPORTED_MEDIA_TYPE`. Stored as sent.",
};

const QUOTA =
  "The upload counts against the record owner's quota (files and bytes of their role; `GET /v1/users/me`): over it, 403 " +
  '`UPLOAD_QUOTA_EXCEEDED`. The answer is 201 with `status: "pending"`: the media job scans it (and decodes an image in full) on ' +
  "the queue; it turns `clean`, listed for everyone and its URLs served, or `rejected` (malware, undecodable, or a scan that kept " +
  "failing): never served, its bytes removed and its quota released, shown to the owner with `rejected_reason` until deleted. " +
  "Needs a verified account; someone else's record: 404 " +
  "(a superuser moderates by deleting, never by adding). Does not change the record's `version`; its detail ETag changes once the item is listed.";

/** The four routes of one kind of media on one kind of record. */
export function mediaRoutes(kind: RecordKind, media: MediaKind) {
  const { name: itemName, noun: itemNoun, param } = ITEM[media];
  const base = `${PREFIX[kind]}/{id}/${media}` as const;
  const one = `${base}/{${param}}` as const;
  const [name, noun, other] = [NAME[kind], NOUN[kind], OTHER[kind]];
  const schema = media === "images" ? ImageSchema : FileSchema;
  const params = media === "images" ? ImageParamsSchema : FileParamsSchema;
  return {
    list: createRoute({
      method: "get",
      path: base,
      operationId: `list${name}${itemName}s`,
      tags: ["Media"],
      summary: `List the ${itemNoun}s of a ${noun}`,
      description:
        `Public. One page of the ${noun}'s ${itemNoun}s, oldest first: the \`clean\` ones; signed in as the record's owner (or a ` +
        "superuser with TOTP), also the `pending` and `rejected` ones, with `status` (and `rejected_reason`). Unknown id or " +
        `${other}: 404. Sends an \`ETag\` and answers \`If-None-Match\` with 304. Signed in, the token's check travels with ` +
        "the read: one D1 round trip.",
      middleware: [authenticateCarried] as const,
      request: { params: IdParamsSchema, query: MediaPageQuerySchema },
      responses: {
        200: {
          description: `A page of ${itemNoun}s.`,
          content: { "application/json": { schema: media === "images" ? ImagePageSchema : FilePageSchema } },
        },
        304: { description: "Unchanged since the `If-None-Match` ETag." },
        ...problemResponses(404, 422, 503),
      },
    }),
    upload: createRoute({
      method: "post",
      path: base,
      operationId: `upload${name}${itemName}`,
      tags: ["Media"],
      summary: `Upload a${media === "images" ? "n image" : " research file"} to a ${noun}`,
      description: `Multipart: the \`file\` part, optional \`description\`${media === "images" ? " and `image_metadata`" : ""}. ${UPLOAD_RULES[media]} ${QUOTA}`,
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params: IdParamsSchema, body: uploadBody(media) },
      responses: {
        201: { description: "Stored and queued for the scan; `Location` names it.", content: { "application/json": { schema } } },
        ...problemResponses(400, 401, 403, 404, 413, 415, 422, 503),
      },
    }),
    get: createRoute({
      method: "get",
      path: one,
      operationId: `get${name}${itemName}`,
      tags: ["Media"],
      summary: `Read one ${itemNoun} of a ${noun}`,
      description: `Public once the ${itemNoun} is \`clean\`; while it is \`pending\`, or once \`rejected\`, only the record's owner (or a superuser with TOTP) sees it, anyone else gets 404. Sends an \`ETag\`.`,
      middleware: [authenticateCarried] as const,
      request: { params },
      responses: {
        200: { description: `The ${itemNoun}.`, content: { "application/json": { schema } } },
        304: { description: "Unchanged since the `If-None-Match` ETag." },
        ...problemResponses(404, 422, 503),
      },
    }),
    remove: createRoute({
      method: "delete",
      path: one,
      operationId: `delete${name}${itemName}`,
      tags: ["Media"],
      summary: `Delete one ${itemNoun} of a ${noun}`,
      description:
        `Deletes the ${itemNoun} (pending, clean or rejected) and releases its size from the owner's quota (a rejected one released it already); its stored object goes unless another ` +
        "item has the same bytes. Needs a verified account; the owner, or a superuser with TOTP moderating (audited); anyone else: 404. " +
        "Does not change the record's `version`.",
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params },
      responses: {
        204: { description: "Deleted." },
        ...problemResponses(401, 403, 404, 422),
      },
    }),
  };
}

export type MediaRoutes = ReturnType<typeof mediaRoutes>;
