import type { AppRouteHandler } from "../../../env";
import { requestOrigin } from "../../../lib/http";
import { requireAdmin } from "../../../middleware/guards";
import { releaseUrl } from "../../../services/releases/metadata";
import { createRelease as create, releaseNotFound, retryRelease as retry } from "../../../services/releases/releases";
import { toRelease } from "../../releases/releases.mappers";
import { RELEASE_VERSION } from "../../releases/releases.schemas";
import type * as routes from "./admin-releases.routes";

export const createRelease: AppRouteHandler<typeof routes.createRelease> = async (c) => {
  const actor = requireAdmin(c);
  const input = c.req.valid("json");
  const origin = requestOrigin(c);
  const release = await create(c.get("services"), actor, input, origin);
  c.header("Location", releaseUrl(origin, release.version));
  return c.json(toRelease(release, [], origin), 202);
};

export const retryRelease: AppRouteHandler<typeof routes.retryRelease> = async (c) => {
  const actor = requireAdmin(c);
  const { version } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version)) throw releaseNotFound();
  const release = await retry(c.get("services"), actor, version);
  return c.json(toRelease(release, [], requestOrigin(c)), 202);
};
