import type { Context } from "hono";
import { hasAdminPowers } from "../../auth/permissions";
import type { AppRouteHandler, BaseEnv, CarriedEnv } from "../../env";
import { matchesIfNoneMatch } from "../../lib/etag";
import { requestOrigin } from "../../lib/http";
import { parseRange } from "../../lib/http-range";
import { negotiateRelease, RELEASE_MEDIA_TYPES, type ReleaseMediaType } from "../../lib/negotiation";
import { pageEnvelope, pageWindow } from "../../lib/pagination";
import { ApiError } from "../../lib/problem";
import { bibtex, citationText, cslJson, ris } from "../../lib/release/citations";
import { dataciteJson } from "../../lib/release/datacite";
import { LANDING_PAGE_CSP, landingPage } from "../../lib/release/landing-page";
import { schemaOrgDataset } from "../../lib/release/schema-org";
import {
  type DescribedRelease,
  describeRelease,
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
 * `read` runs first as for everyone else, and again only when the check shows such a superuser
 * and `published` is false (the latest is a published release for everyone: one read, whoever
 * asks). `admin` says whether the viewer has admin powers (the DOI's registration details).
 */
async function asViewer<T>(
  c: Context<CarriedEnv>,
  read: (seesUnpublished: boolean) => Promise<T>,
  published = false,
): Promise<{ found: T; admin: boolean }> {
  const [found, viewer] = await c.get("viewer").after(read(false));
  const admin = hasAdminPowers(viewer);
  return { found: admin && !published ? await read(true) : found, admin };
}

export const listReleases: AppRouteHandler<typeof routes.listReleases, BaseEnv> = async (c) => {
  const page = c.req.valid("query");
  const {
    found: { releases, total },
    admin,
  } = await asViewer(c, (unpublished) => readReleases(c.get("services").db, pageWindow(page), unpublished));
  return c.json(
    pageEnvelope(
      releases.map((release) => toReleaseSummary(release, admin)),
      total,
      page,
    ),
    200,
  );
};

/** How each representation is sent: its Content-Type and its body. */
const REPRESENTATIONS: Readonly<
  Record<Exclude<ReleaseMediaType, "application/json">, { type: string; body: (found: DescribedRelease) => string }>
> = {
  "text/html": {
    type: "text/html; charset=utf-8",
    body: (found) => landingPage({ release: found.description, versions: found.versions, doiStatus: found.doiStatus }),
  },
  "application/ld+json": { type: "application/ld+json", body: (found) => JSON.stringify(schemaOrgDataset(found.description)) },
  "application/vnd.datacite.datacite+json": {
    type: "application/vnd.datacite.datacite+json",
    body: (found) => JSON.stringify(dataciteJson(found.description)),
  },
  "application/vnd.citationstyles.csl+json": {
    type: "application/vnd.citationstyles.csl+json",
    body: (found) => JSON.stringify(cslJson(found.description)),
  },
  "application/x-bibtex": { type: "application/x-bibtex; charset=utf-8", body: (found) => bibtex(found.description) },
  "application/x-research-info-systems": {
    type: "application/x-research-info-systems; charset=utf-8",
    body: (found) => ris(found.description),
  },
  "text/x-bibliography": { type: "text/x-bibliography; charset=utf-8", body: (found) => `${citationText(found.description)}\n` },
};

function notAcceptable(): ApiError {
  return new ApiError(406, {
    code: "NOT_ACCEPTABLE",
    detail: `A release is available as ${RELEASE_MEDIA_TYPES.join(", ")}; the Accept header allows none of them.`,
    headers: { Vary: "Accept" },
  });
}

/**
 * A release (`version` null: the latest published) in the representation the request's Accept
 * header selects; `notFound` when there is none the viewer may see. JSON reads the release and
 * its files; every other representation its description (src/services/releases/descriptions.ts).
 */
async function answerRelease(c: Context<CarriedEnv>, version: string | null, notFound: () => ApiError): Promise<Response> {
  const type = negotiateRelease(c.req.header("accept"));
  if (type === null) throw notAcceptable();
  const db = c.get("services").db;
  const origin = requestOrigin(c);
  const read = <T>(reader: (unpublished: boolean) => Promise<T>) => asViewer(c, reader, version === null);
  if (type === "application/json") {
    const { found, admin } = await read((unpublished) => readRelease(db, version, unpublished));
    if (!found) throw notFound();
    c.header("Vary", "Accept");
    return c.json(toRelease(found.release, found.files, origin, admin), 200);
  }
  const { found } = await read((unpublished) => describeRelease(db, version, unpublished, origin, type === "text/html"));
  if (!found) throw notFound();
  const representation = REPRESENTATIONS[type];
  const headers: Record<string, string> = { "Content-Type": representation.type, Vary: "Accept" };
  if (type === "text/html") headers["Content-Security-Policy"] = LANDING_PAGE_CSP;
  return c.body(representation.body(found), 200, headers);
}

export const getLatestRelease: AppRouteHandler<typeof routes.getLatestRelease, BaseEnv> = async (c) =>
  answerRelease(c, null, () => new ApiError(404, { code: "NOT_FOUND", detail: "No release has been published yet." })) as never;

export const getRelease: AppRouteHandler<typeof routes.getRelease, BaseEnv> = async (c) => {
  const { version } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version)) {
    // Refused before any read, but in the same order as a real one: an unacceptable request is 406 whatever the version.
    if (negotiateRelease(c.req.header("accept")) === null) throw notAcceptable();
    throw releaseNotFound();
  }
  return answerRelease(c, version, releaseNotFound) as never;
};

const fileNotFound = () => new ApiError(404, { code: "NOT_FOUND", detail: "No file at this path in this release." });

/**
 * Serves a file's bytes from R2. Its row (one round trip) gives the size and SHA-256, so
 * `If-None-Match` and an unsatisfiable range are answered without reading storage.
 */
export const getReleaseFile: AppRouteHandler<typeof routes.getReleaseFile, BaseEnv> = async (c) => {
  const { version, path } = c.req.valid("param");
  if (!RELEASE_VERSION.test(version) || !FILE_PATH.test(path)) throw fileNotFound();
  const { found: file } = await asViewer(c, (unpublished) => findReleaseFile(c.get("services").db, version, path, unpublished));
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
