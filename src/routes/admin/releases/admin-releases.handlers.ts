import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { requestOrigin } from "../../../lib/http";
import { requireAdmin } from "../../../middleware/guards";
import { retryReleaseDoi } from "../../../services/release-doi";
import { releaseUrl } from "../../../services/release-metadata";
import { createRelease as create, getRelease, releaseNotFound, retryRelease as retry } from "../../../services/releases";
import { toRelease } from "../../releases/releases.mappers";
import { RELEASE_VERSION } from "../../releases/releases.schemas";
import type * as routes from "./admin-releases.routes";

export const createRelease: RouteHandler<typeof routes.createRelease, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const input = c.req.valid("json");
  const origin = requestOrigin(c);
  const release = await create(c.get("services"), actor, input, origin);
  c.header("Location", releaseUrl(origin, release.version));
  return c.json(toRelease(release, [], origin, true), 202);
};

export const retryRelease: RouteHandler<typeof routes.retryRelease, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { version } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version)) throw releaseNotFound();
  const release = await retry(c.get("services"), actor, version);
  return c.json(toRelease(release, [], requestOrigin(c), true), 202);
};

export const retryDoi: RouteHandler<typeof routes.retryDoi, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { version } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version)) throw releaseNotFound();
  const svc = c.get("services");
  await retryReleaseDoi(svc, actor, version);
  const found = await getRelease(svc.db, version, true);
  if (!found) throw releaseNotFound();
  return c.json(toRelease(found.release, found.files, requestOrigin(c), true), 202);
};
