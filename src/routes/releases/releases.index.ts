import type { BaseEnv } from "../../env";
import { createRouter } from "../../lib/router";
import * as handlers from "./releases.handlers";
import * as routes from "./releases.routes";

/** `/v1/releases...`: published dataset releases and their files (superusers also see unpublished ones). */
export const releasesRouter = createRouter<BaseEnv>()
  .openapi(routes.listReleases, handlers.listReleases)
  // Before `/releases/{version}`, which would read `latest` as a version.
  .openapi(routes.getLatestRelease, handlers.getLatestRelease)
  .openapi(routes.getRelease, handlers.getRelease)
  .openapi(routes.getReleaseFile, handlers.getReleaseFile);
