import { and, count, desc, eq, gte, lt, or, type SQLWrapper, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnList, columnsOf, type RowOf } from "../../db/rows";
import { releaseFiles, releases } from "../../db/schema";
import { audit } from "../../lib/audit";
import { ApiError } from "../../lib/problem";
import type { OtherVersion } from "../../lib/release/landing-page";
import type { ReleaseDescription } from "../../lib/release/publication";
import { type DescriptionRow, describedRelease, describeStatement, toDescription } from "./descriptions";
import type { ReleaseMessage } from "./messages";
import { releaseUrl } from "./metadata";

/**
 * Dataset releases as the routes see them: creating one (its build then runs on the release
 * queue, src/services/releases/build.ts), retrying a failed or stalled build, and reading releases
 * and their files. Unpublished releases exist only for superusers (`includeUnpublished`).
 */

export type ReleaseStatus = "building" | "published" | "failed";
export type DoiStatus = "disabled" | "pending" | "registered" | "failed";

export interface Release {
  version: string;
  title: string;
  description: string | null;
  licence: string;
  status: ReleaseStatus;
  baseUrl: string;
  snapshotAt: number | null;
  createdAt: number;
  publishedAt: number | null;
  counts: { records: number; baseProducts: number; images: number; recordMaterials: number } | null;
  recordsWritten: number;
  failureReason: string | null;
  updatedAt: number;
  /** The DOI registration (src/services/releases/doi.ts). */
  doi: string | null;
  conceptDoi: string | null;
  doiStatus: DoiStatus;
  doiError: string | null;
  publisher: string;
  creator: string;
}

export interface ReleaseFile {
  path: string;
  bytes: number;
  sha256: string;
  mediaType: string;
}

export interface NewRelease {
  version: string;
  title: string;
  description?: string | null;
  licence: string;
}

/** What the release routes need (the service container's members by their names; bindings explicit). */
export type ReleaseServices = Pick<Services, "db" | "log" | "bindings" | "config">;

/** A building release that has shown no sign of life this long may be retried (its build was lost). */
export const STALLED_AFTER_SECONDS = 10 * 60;

const RELEASE_FIELDS = [
  "version",
  "title",
  "description",
  "licence",
  "status",
  "base_url",
  "snapshot_at",
  "created_at",
  "published_at",
  "records",
  "base_products",
  "images",
  "record_materials",
  "records_written",
  "failure_reason",
  "updated_at",
  "doi",
  "concept_doi",
  "doi_status",
  "doi_error",
  "publisher",
  "creator",
] as const;

type ReleaseRow = RowOf<typeof releases, (typeof RELEASE_FIELDS)[number]>;

/** A release file as the reads select it. */
const FILE_FIELDS = ["path", "bytes", "sha256", "media_type"] as const;

function toRelease(row: ReleaseRow): Release {
  return {
    version: row.version,
    title: row.title,
    description: row.description,
    licence: row.licence,
    status: row.status,
    baseUrl: row.base_url,
    snapshotAt: row.snapshot_at,
    createdAt: row.created_at,
    publishedAt: row.published_at,
    counts:
      row.snapshot_at === null
        ? null
        : {
            records: row.records ?? 0,
            baseProducts: row.base_products ?? 0,
            images: row.images ?? 0,
            recordMaterials: row.record_materials ?? 0,
          },
    recordsWritten: row.records_written,
    failureReason: row.failure_reason,
    updatedAt: row.updated_at,
    doi: row.doi,
    conceptDoi: row.concept_doi,
    doiStatus: row.doi_status,
    doiError: row.doi_error,
    publisher: row.publisher,
    creator: row.creator ?? row.publisher,
  };
}

/** Which releases a viewer sees: all for a superuser (no condition), else the published. */
const visible = (includeUnpublished: boolean) => (includeUnpublished ? undefined : eq(releases.status, "published"));

const NEWEST_FIRST = [desc(releases.created_at), desc(releases.version)];

/** The version a read names: `version`, or (null) the latest published release's, as a sub-select. */
function chosenVersion(db: Db, version: string | null): SQLWrapper | string {
  if (version !== null) return version;
  return db
    .select({ version: releases.version })
    .from(releases)
    .where(eq(releases.status, "published"))
    .orderBy(...NEWEST_FIRST)
    .limit(1);
}

/** Queues a build attempt; on failure the caller undoes what it wrote. */
async function queueBuild(svc: ReleaseServices, version: string, buildId: string): Promise<void> {
  const body: ReleaseMessage = { type: "release.build", version, build_id: buildId };
  await svc.bindings.RELEASE_QUEUE.send(body, { contentType: "json" });
}

function queueUnavailable(): ApiError {
  return new ApiError(503, {
    code: "RELEASE_QUEUE_UNAVAILABLE",
    detail: "The release build could not be queued; nothing was changed. Try again shortly.",
    headers: { "Retry-After": "5" },
  });
}

/**
 * Creates a release in state `building` (one round trip) and queues its build. A version that
 * exists is 409 `ALREADY_EXISTS`. Should the queue refuse the message, the row is deleted again
 * and the answer is 503: nothing is left half made.
 */
export async function createRelease(svc: ReleaseServices, actor: SessionUser, input: NewRelease, baseUrl: string): Promise<Release> {
  const buildId = crypto.randomUUID();
  // Who publishes and creates it is stamped now: its files, citations and DOI metadata all name them.
  const { publisher, creator, creatorRor } = svc.config.releaseAuthorship;
  const rows = await svc.db.all<ReleaseRow>(
    svc.db
      .insert(releases)
      .values({
        version: input.version,
        title: input.title,
        description: input.description ?? null,
        licence: input.licence,
        status: "building",
        base_url: baseUrl,
        build_id: buildId,
        publisher,
        creator,
        creator_ror: creatorRor,
      })
      .onConflictDoNothing({ target: releases.version })
      .returning(columnsOf(releases, RELEASE_FIELDS)),
  );
  const row = rows[0];
  if (!row) {
    throw new ApiError(409, {
      code: "ALREADY_EXISTS",
      detail: `Release ${input.version} exists already; releases are never replaced, choose another version.`,
      errors: [{ pointer: "/version", detail: "This version is taken." }],
    });
  }
  try {
    await queueBuild(svc, input.version, buildId);
  } catch (error) {
    svc.log.error("release build could not be queued", { release: input.version, error });
    // Raw: guarded undo; only this attempt's row, and only while it is still building.
    await svc.db.run(sql`DELETE FROM releases WHERE version = ${input.version} AND build_id = ${buildId} AND status = 'building'`);
    throw queueUnavailable();
  }
  audit(svc.log, "admin.release.created", { actor_id: actor.id, release: input.version });
  return toRelease(row);
}

/**
 * Starts a new attempt of a failed build, or of a building one that has stalled (no lease and no
 * sign of life for STALLED_AFTER_SECONDS: its messages were lost), from a new snapshot: a
 * compare-and-set on the state, so of two concurrent retries one wins. Published: 409
 * `RELEASE_PUBLISHED`; building and alive: 409 `RELEASE_BUILDING`; unknown: 404.
 */
export async function retryRelease(svc: ReleaseServices, actor: SessionUser, version: string): Promise<Release> {
  const buildId = crypto.randomUUID();
  const [retried, current] = await batchRows<[ReleaseRow, { status: ReleaseStatus; build_id: string }]>(svc.db, [
    // Raw: compare-and-set on the build's state (failed, or building and stalled), decided by the UPDATE's own condition.
    sql`UPDATE releases SET status = 'building', build_id = ${buildId}, snapshot_at = NULL, records = NULL, base_products = NULL, images = NULL,
        record_materials = NULL, records_written = 0, build_state = NULL, lease_id = NULL, lease_until = NULL, build_failures = 0,
        failure_reason = NULL, updated_at = unixepoch()
      WHERE version = ${version} AND (status = 'failed' OR (status = 'building' AND coalesce(lease_until, 0) < unixepoch()
        AND updated_at < unixepoch() - ${STALLED_AFTER_SECONDS}))
      RETURNING ${columnList(RELEASE_FIELDS)}`,
    svc.db.select({ status: releases.status, build_id: releases.build_id }).from(releases).where(eq(releases.version, version)),
  ]);
  const row = retried[0];
  if (!row) {
    const found = current[0];
    if (!found) throw releaseNotFound();
    if (found.status === "published") {
      throw new ApiError(409, { code: "RELEASE_PUBLISHED", detail: `Release ${version} is published; a published release never changes.` });
    }
    throw new ApiError(409, {
      code: "RELEASE_BUILDING",
      detail: `Release ${version} is still building; a build can be retried once it failed, or after ${STALLED_AFTER_SECONDS / 60} minutes without progress.`,
    });
  }
  try {
    await queueBuild(svc, version, buildId);
  } catch (error) {
    svc.log.error("release build could not be queued", { release: version, error });
    // Without its message the new attempt would never run: it ends failed at once, to be retried again.
    // Raw: compare-and-set; only this attempt, and only while no slice has taken it up.
    await svc.db
      .run(sql`UPDATE releases SET status = 'failed', failure_reason = 'The retry could not be queued; retry again.', updated_at = unixepoch()
        WHERE version = ${version} AND build_id = ${buildId} AND status = 'building' AND lease_id IS NULL AND snapshot_at IS NULL`)
      .catch((undo: unknown) =>
        svc.log.error("a retry that could not be queued could not be marked failed either", { release: version, error: undo }),
      );
    throw queueUnavailable();
  }
  audit(svc.log, "admin.release.retried", { actor_id: actor.id, release: version });
  return toRelease(row);
}

export function releaseNotFound(): ApiError {
  return new ApiError(404, { code: "NOT_FOUND", detail: "No release with this version exists." });
}

/**
 * One release and its files, except the image files (the images table lists those), in one
 * round trip; null when there is none the viewer may see. `version` null: the latest published.
 */
export async function getRelease(
  db: Db,
  version: string | null,
  includeUnpublished: boolean,
): Promise<{ release: Release; files: ReleaseFile[] } | null> {
  const chosen = chosenVersion(db, version);
  const [rows, files] = await batchRows<[ReleaseRow, RowOf<typeof releaseFiles, (typeof FILE_FIELDS)[number]>]>(db, [
    db
      .select(columnsOf(releases, RELEASE_FIELDS))
      .from(releases)
      .where(and(eq(releases.version, chosen), visible(includeUnpublished))),
    // The image files (`images/` up to `images0`) are left out by an index range, without reading them.
    db
      .select(columnsOf(releaseFiles, FILE_FIELDS))
      .from(releaseFiles)
      .where(and(eq(releaseFiles.release_version, chosen), or(lt(releaseFiles.path, "images/"), gte(releaseFiles.path, "images0"))))
      .orderBy(releaseFiles.path),
  ]);
  const row = rows[0];
  if (!row) return null;
  return {
    release: toRelease(row),
    files: files.map((f) => ({ path: f.path, bytes: f.bytes, sha256: f.sha256, mediaType: f.media_type })),
  };
}

/** A release as its citations and landing page describe it, with the state of its DOI. */
export interface DescribedRelease {
  description: ReleaseDescription;
  status: ReleaseStatus;
  doiStatus: DoiStatus;
  /** Every published release, newest first (only when asked for: the landing page lists them). */
  versions: OtherVersion[];
}

/** How many other versions a landing page lists at most (newest first). */
export const LANDING_PAGE_VERSIONS = 100;

/**
 * One release the viewer may see (`version` null: the latest published) as its citations,
 * metadata records and landing page describe it, in one round trip; with `withVersions`, also the
 * published releases for the page's list. Null when there is none, or when it has no snapshot yet
 * (a superuser's building release: nothing to cite). File URLs on `origin`.
 */
export async function describeRelease(
  db: Db,
  version: string | null,
  includeUnpublished: boolean,
  origin: string,
  withVersions: boolean,
): Promise<DescribedRelease | null> {
  const chosen = chosenVersion(db, version);
  const statements: SQLWrapper[] = [
    describeStatement(
      and(eq(describedRelease.version, chosen), includeUnpublished ? undefined : eq(describedRelease.status, "published"))!,
    ),
  ];
  if (withVersions) {
    statements.push(
      db
        .select(columnsOf(releases, ["version", "title", "published_at", "doi", "base_url"]))
        .from(releases)
        .where(eq(releases.status, "published"))
        .orderBy(...NEWEST_FIRST)
        .limit(LANDING_PAGE_VERSIONS),
    );
  }
  const [rows, others = []] = await batchRows<
    [DescriptionRow, { version: string; title: string; published_at: number; doi: string | null; base_url: string }]
  >(db, statements as [SQLWrapper, SQLWrapper]);
  const row = rows[0];
  const description = row ? toDescription(row, origin) : null;
  if (!row || !description) return null;
  return {
    description,
    status: row.status as ReleaseStatus,
    doiStatus: row.doi_status as DoiStatus,
    versions: others.map((other) => ({
      version: other.version,
      title: other.title,
      publishedAt: other.published_at,
      doi: other.doi,
      url: releaseUrl(other.base_url, other.version),
    })),
  };
}

/** A page of releases, newest first, and how many there are, in one round trip. */
export async function listReleases(
  db: Db,
  page: { limit: number; offset: number },
  includeUnpublished: boolean,
): Promise<{ releases: Release[]; total: number }> {
  const [rows, counted] = await batchRows<[ReleaseRow, { total: number }]>(db, [
    db
      .select(columnsOf(releases, RELEASE_FIELDS))
      .from(releases)
      .where(visible(includeUnpublished))
      .orderBy(...NEWEST_FIRST)
      .limit(page.limit)
      .offset(page.offset),
    db
      .select({ total: count().as("total") })
      .from(releases)
      .where(visible(includeUnpublished)),
  ]);
  return { releases: rows.map(toRelease), total: counted[0]?.total ?? 0 };
}

/** A file of a release the viewer may see (one round trip), with whether the release is published. */
export async function findReleaseFile(
  db: Db,
  version: string,
  path: string,
  includeUnpublished: boolean,
): Promise<(ReleaseFile & { published: boolean }) | null> {
  // A batch of one, so that a carried token check travels with it (`carryInNextBatch`).
  const r = alias(releases, "r");
  const f = alias(releaseFiles, "f");
  const [rows] = await batchRows<[{ path: string; bytes: number; sha256: string; media_type: string; status: ReleaseStatus }]>(db, [
    db
      .select({ ...columnsOf(f, FILE_FIELDS), status: r.status })
      .from(r)
      .innerJoin(f, and(eq(f.release_version, r.version), eq(f.path, path)))
      .where(and(eq(r.version, version), includeUnpublished ? undefined : eq(r.status, "published"))),
  ]);
  const row = rows[0];
  if (!row) return null;
  return { path: row.path, bytes: row.bytes, sha256: row.sha256, mediaType: row.media_type, published: row.status === "published" };
}
