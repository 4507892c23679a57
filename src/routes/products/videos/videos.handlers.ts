import type { Context } from "hono";
import { assertMayModify, type WriteIntent } from "../../../auth/permissions";
import type { AppEnv, AppRouteHandler } from "../../../env";
import { jsonWithEtag } from "../../../lib/etag";
import { ApiError } from "../../../lib/problem";
import { requireVerified } from "../../../middleware/guards";
import { toVideo } from "../../../schemas/media";
import { auditModeration } from "../../../services/products/moderation";
import { readOwnership } from "../../../services/products/records";
import * as videos from "../../../services/products/videos";
import type * as routes from "./videos.routes";

/** The caller may write the product's videos (404 otherwise); returns the owner for the moderation audit. */
async function writableProduct(c: Context<AppEnv>, productId: number, intent: WriteIntent) {
  const user = requireVerified(c);
  const owned = await readOwnership(c.get("services"), productId, "product");
  assertMayModify(user, owned, videos.productMissing, intent);
  return { user, owned };
}

export const listVideos: AppRouteHandler<typeof routes.listVideos> = async (c) => {
  const rows = await videos.readVideos(c.get("services"), c.req.valid("param").id);
  return jsonWithEtag(c, rows.map(toVideo));
};

export const getVideo: AppRouteHandler<typeof routes.getVideo> = async (c) => {
  const { id, video_id } = c.req.valid("param");
  return jsonWithEtag(c, toVideo(await videos.readVideo(c.get("services"), id, video_id)));
};

export const addVideo: AppRouteHandler<typeof routes.addVideo> = async (c) => {
  const { id } = c.req.valid("param");
  await writableProduct(c, id, "add");
  const row = await videos.addVideo(c.get("services"), id, c.req.valid("json"));
  c.header("Location", `/v1/products/${id}/videos/${row.id}`);
  return c.json(toVideo(row), 201);
};

export const updateVideo: AppRouteHandler<typeof routes.updateVideo> = async (c) => {
  const { id, video_id } = c.req.valid("param");
  const { user, owned } = await writableProduct(c, id, "correct");
  const row = await videos.updateVideo(c.get("services"), id, video_id, c.req.valid("json"));
  auditModeration(c.get("log"), user, owned, "moderation.record.updated", { kind: "product", id });
  return c.json(toVideo(row), 200);
};

export const deleteVideo: AppRouteHandler<typeof routes.deleteVideo> = async (c) => {
  const { id, video_id } = c.req.valid("param");
  const { user, owned } = await writableProduct(c, id, "correct");
  await videos.deleteVideo(c.get("services"), id, video_id);
  auditModeration(c.get("log"), user, owned, "moderation.media.deleted", { kind: "product", id });
  return c.body(null, 204);
};

export const addComponentVideo: AppRouteHandler<typeof routes.addComponentVideo> = async () => {
  throw new ApiError(422, {
    code: "COMPONENT_VIDEOS_NOT_ALLOWED",
    detail: "Components cannot carry videos; add the video to the base product.",
  });
};
