import type { Context } from "hono";
import { hasAdminPowers } from "../../auth/permissions";
import type { AppEnv, AppRouteHandler } from "../../env";
import { matchesIfNoneMatch } from "../../lib/etag";
import { requestOrigin } from "../../lib/http";
import { parseRange } from "../../lib/http-range";
import { pageEnvelope, pageWindow } from "../../lib/pagination";
import { ApiError } from "../../lib/problem";
import {
  findReleaseFile,
  getRelease as readRelease,
  listReleases as readReleases,
  releaseNotFound,
} from "../../services/releases/releases";
import { releaseKey, servedContentType } from "../../services/releases/storage";
import { toRelease, toReleaseSummary } from "./releases.mappers";
import type * as routes from "./releases.routes";
import { RELEASE_VERSION } from "./releases.schemas";

/** A path a release file can have: anything else is a 404 without a database read. */
const FILE_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * Superusers with TOTP see releases that are building or failed; everyone else published ones
 * only. A signed-in request's token check travels with the first read (`authenticateCarried`), so
 * `read` runs first as for everyone else, and again only when the check shows such a superuser.
 */
async function asViewer<T>(c: Context<AppEnv>, read: (seesUnpublished: boolean) => Promise<T>): Promise<T> {
  const found = await read(false);
  return hasAdminPowers(c.get("user")) ? read(true) : found;
}

export const listReleases: AppRouteHandler<typeof routes.listReleases> = async (c) => {
  const page = c.req.valid("query");
  const { releases, total } = await asViewer(c, (unpublished) => readReleases(c.get("services").db, pageWindow(page), unpublished));
  return c.json(pageEnvelope(releases.map(toReleaseSummary), total, page), 200);
};

export const getLatestRelease: AppRouteHandler<typeof routes.getLatestRelease> = async (c) => {
  const found = await readRelease(c.get("services").db, null, false);
  if (!found) throw new ApiError(404, { code: "NOT_FOUND", detail: "No release has been published yet." });
  return c.json(toRelease(found.release, found.files, requestOrigin(c)), 200);
};

export const getRelease: AppRouteHandler<typeof routes.getRelease> = async (c) => {
  const { version } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version)) throw releaseNotFound();
  const found = await asViewer(c, (unpublished) => readRelease(c.get("services").db, version, unpublished));
  if (!found) throw releaseNotFound();
  return c.json(toRelease(found.release, found.files, requestOrigin(c)), 200);
};

const fileNotFound = () => new ApiError(404, { code: "NOT_FOUND", detail: "No file at this path in this release." });

/**
 * Serves a file's bytes from R2. Its row (one round trip) gives the size and SHA-256, so
 * `If-None-Match` and an unsatisfiable range are answered without reading storage.
 */
export const getReleaseFile: AppRouteHandler<typeof routes.getReleaseFile> = async (c) => {
  const { version, path } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version) || !FILE_PATH.test(path)) throw fileNotFound();
  const file = await asViewer(c, (unpublished) => findReleaseFile(c.get("services").db, version, path, unpublished));
  if (!file) throw fileNotFound();
  const etag = `"${file.sha256}"`;
  const headers = new Headers({
    "Content-Type": servedContentType(file.mediaType),
    ETag: etag,
    "Accept-Ranges": "bytes",
    // A release being built may be written again by a retry: only published bytes are cacheable.
    "Cache-Control": file.published ? IMMUTABLE : "no-store",
    // Nothing served here may run as a document; notebooks and apps on other origins may fetch it.
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cross-Origin-Resource-Policy": "cross-origin",
  });
  if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return new Response(null, { status: 304, headers }) as never;
  const range = parseRange(c.req.header("range"), file.bytes);
  if (range === "unsatisfiable") {
    throw new ApiError(416, {
      code: "RANGE_NOT_SATISFIABLE",
      detail: `The range lies outside the ${file.bytes} bytes of this file.`,
      headers: { "Content-Range": `bytes */${file.bytes}` },
    });
  }
  const object = await c.get("services").bindings.UPLOADS.get(releaseKey(version, path), range ? { range } : {});
  // Its row says it was written: a missing object is storage lost, not a client's mistake.
  if (!object) throw new Error(`release file ${version}/${path} is listed but missing from storage`);
  if (range) {
    headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${file.bytes}`);
    headers.set("Content-Length", String(range.length));
    return new Response(object.body, { status: 206, headers }) as never;
  }
  headers.set("Content-Length", String(file.bytes));
  return new Response(object.body, { status: 200, headers }) as never;
};
