import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticate } from "../../../middleware/authenticate";
import { VideoSchema } from "../../../schemas/media";
import { IdParamsSchema } from "../../../schemas/params";
import { MAX_VIDEOS } from "../../../services/products/videos";
import { VideoInputSchema } from "../products.schemas";

export const VideoParamsSchema = IdParamsSchema.extend({
  video_id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "video_id", in: "path" }, example: 4 }),
});

/** PATCH body: the members given change, the rest stay. */
export const VideoUpdateSchema = z
  .strictObject({
    url: VideoInputSchema.shape.url.optional(),
    title: VideoInputSchema.shape.title,
    description: VideoInputSchema.shape.description,
    video_metadata: VideoInputSchema.shape.video_metadata,
  })
  .openapi("VideoUpdate", { example: { title: "Teardown, part 2" } });

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const WRITE =
  "Needs a verified account; someone else's product (or a component id): 404. A superuser with TOTP may correct and delete " +
  "others' videos (audited) but not add them. Does not change the product's `version`; its detail ETag changes.";

export const listVideos = createRoute({
  method: "get",
  path: "/products/{id}/videos",
  operationId: "listProductVideos",
  tags: ["Media"],
  summary: "List the videos of a base product",
  description: `Public. Every video of the base product, by id (at most ${MAX_VIDEOS}, so not paged); a component id: 404. Sends an \`ETag\`.`,
  request: { params: IdParamsSchema },
  responses: {
    200: { description: "The videos.", content: { "application/json": { schema: z.array(VideoSchema) } } },
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 422),
  },
});

export const addVideo = createRoute({
  method: "post",
  path: "/products/{id}/videos",
  operationId: "addProductVideo",
  tags: ["Media"],
  summary: "Add a video to a base product",
  description: `A link to a video (https). At most ${MAX_VIDEOS} per product: a sixth is 409 \`VIDEO_LIMIT_REACHED\`. ${WRITE}`,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: IdParamsSchema, body: json(VideoInputSchema) },
  responses: {
    201: { description: "Added; `Location` names it.", content: { "application/json": { schema: VideoSchema } } },
    ...problemResponses(401, 403, 404, 409, 413, 415, 422),
  },
});

export const getVideo = createRoute({
  method: "get",
  path: "/products/{id}/videos/{video_id}",
  operationId: "getProductVideo",
  tags: ["Media"],
  summary: "Read one video of a base product",
  description: "Public. Sends an `ETag`.",
  request: { params: VideoParamsSchema },
  responses: {
    200: { description: "The video.", content: { "application/json": { schema: VideoSchema } } },
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 422),
  },
});

export const updateVideo = createRoute({
  method: "patch",
  path: "/products/{id}/videos/{video_id}",
  operationId: "updateProductVideo",
  tags: ["Media"],
  summary: "Change a video of a base product",
  description: `Members left out stay as they are. ${WRITE}`,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: VideoParamsSchema, body: json(VideoUpdateSchema) },
  responses: {
    200: { description: "The video as it is now.", content: { "application/json": { schema: VideoSchema } } },
    ...problemResponses(401, 403, 404, 413, 415, 422),
  },
});

export const deleteVideo = createRoute({
  method: "delete",
  path: "/products/{id}/videos/{video_id}",
  operationId: "deleteProductVideo",
  tags: ["Media"],
  summary: "Delete a video of a base product",
  description: WRITE,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: VideoParamsSchema },
  responses: {
    204: { description: "Deleted." },
    ...problemResponses(401, 403, 404, 422),
  },
});

export const addComponentVideo = createRoute({
  method: "post",
  path: "/components/{id}/videos",
  operationId: "addComponentVideo",
  tags: ["Media"],
  summary: "Components cannot carry videos",
  description:
    "Always 422 `COMPONENT_VIDEOS_NOT_ALLOWED` (decisions.md): videos belong to base products; add it to the base product instead.",
  request: { params: IdParamsSchema },
  responses: { ...problemResponses(422) },
});
