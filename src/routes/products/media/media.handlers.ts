import type { Context } from "hono";
import { assertMayModify, hasAdminPowers } from "../../../auth/permissions";
import type { AppEnv, AppRouteHandler } from "../../../env";
import { jsonWithEtag } from "../../../lib/etag";
import { requestOrigin } from "../../../lib/http";
import { MULTIPART_ALLOWANCE_BYTES, readLimitedForm } from "../../../lib/multipart";
import { pageEnvelope } from "../../../lib/pagination";
import { ApiError, notFound } from "../../../lib/problem";
import { pendingViewerId } from "../../../middleware/authenticate";
import { requireVerified } from "../../../middleware/guards";
import { toFile, toImage } from "../../../schemas/media";
import { storeUpload } from "../../../services/media/intake";
import {
  assertWithinQuota,
  deleteMedia,
  type MediaParent,
  readMediaItem,
  readMediaPage,
  readUploadTarget,
} from "../../../services/media/media";
import type { FileRow, ImageRow } from "../../../services/media/records";
import { type MediaKind, objectKeys, quarantineKey } from "../../../services/media/storage";
import { fileCap, parseUploadForm, prepareFile, prepareImage, tooLargeDetail } from "../../../services/media/upload";
import { auditModeration } from "../../../services/products/moderation";
import type { RecordKind } from "../../../services/products/records";
import type { MediaRoutes } from "./media.routes";

const PREFIX = { product: "/v1/products", component: "/v1/components" } as const;

const parentOf = (kind: RecordKind, id: number): MediaParent => ({
  id,
  kind,
  missing: () => notFound(kind === "product" ? "No base product has this id." : "No component has this id."),
});

type Handler<K extends keyof MediaRoutes> = AppRouteHandler<MediaRoutes[K]>;

const labRequired = () =>
  new ApiError(403, { code: "LAB_ROLE_REQUIRED", detail: "Uploading research files needs the lab role; images go to the /images routes." });

/** The handlers of the four routes of one kind of media on one kind of record. */
export function mediaHandlers(kind: RecordKind, media: MediaKind) {
  const toItem = (c: Context<AppEnv>, row: ImageRow | FileRow) =>
    media === "images" ? toImage(row as ImageRow, requestOrigin(c)) : toFile(row as FileRow, requestOrigin(c));
  // The route's params are the image or the file schema, chosen per router: one shape here.
  const paramsOf = (c: { req: { valid(target: "param"): unknown } }) => {
    const param = c.req.valid("param") as { id: number; image_id?: string; file_id?: string };
    return { id: param.id, mediaId: media === "images" ? param.image_id! : param.file_id! };
  };

  const list: Handler<"list"> = async (c) => {
    const { id } = c.req.valid("param");
    const { page, size } = c.req.valid("query");
    const svc = c.get("services");
    const parent = parentOf(kind, id);
    // A presented token's check travels in the page's batch: the page is read as the account the
    // token names, without moderator powers, which is right unless the check finds the token no
    // longer valid or the account a superuser with TOTP; the page is then read again as what it found.
    const claimed = pendingViewerId(c);
    let found = await readMediaPage(svc, parent, media, { page, size }, claimed === null ? c.get("user") : { provisional: claimed });
    const viewer = c.get("user");
    if (claimed !== null && (viewer === null || hasAdminPowers(viewer)))
      found = await readMediaPage(svc, parent, media, { page, size }, viewer);
    return jsonWithEtag(
      c,
      pageEnvelope(
        found.rows.map((row) => toItem(c, row)),
        found.total,
        { page, size },
      ),
    );
  };

  const get: Handler<"get"> = async (c) => {
    const { id, mediaId } = paramsOf(c);
    const row = await readMediaItem(c.get("services"), parentOf(kind, id), media, mediaId, () => c.get("user"));
    return jsonWithEtag(c, toItem(c, row));
  };

  const upload: Handler<"upload"> = async (c) => {
    const user = requireVerified(c);
    if (media === "files" && user.role !== "lab") throw labRequired();
    const { id } = c.req.valid("param");
    const parent = parentOf(kind, id);
    const svc = c.get("services");
    const target = await readUploadTarget(svc, parent);
    assertMayModify(user, target, parent.missing, "add");
    const cap = fileCap(media, user.role);
    const form = await readLimitedForm(c.req.raw, cap + MULTIPART_ALLOWANCE_BYTES, tooLargeDetail(media, user.role, cap));
    const fields = parseUploadForm(form, media);
    const prepared = media === "images" ? await prepareImage(fields, user.role) : await prepareFile(fields);
    assertWithinQuota(target!, prepared.bytes.length);

    const row = await storeUpload(svc, parent, media, prepared, user.id);
    c.header("Location", `${PREFIX[kind]}/${id}/${media}/${row.id}`);
    return c.json(toItem(c, row), 201);
  };

  const remove: Handler<"remove"> = async (c) => {
    const user = requireVerified(c);
    const { id, mediaId } = paramsOf(c);
    const parent = parentOf(kind, id);
    const svc = c.get("services");
    const target = await readUploadTarget(svc, parent);
    assertMayModify(user, target, parent.missing);
    const deleted = await deleteMedia(svc, parent, media, mediaId);
    auditModeration(svc.log, user, target, "moderation.media.deleted", { kind, id });
    const keys = [quarantineKey(media, mediaId), ...(deleted.shared ? [] : objectKeys(media, deleted.storageKey))];
    await svc.bindings.UPLOADS.delete(keys);
    return c.body(null, 204);
  };

  return { list, get, upload, remove };
}
