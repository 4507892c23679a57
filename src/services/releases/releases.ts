import { type SQL, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { audit } from "../../lib/audit";
import { ApiError } from "../../lib/problem";
import type { ReleaseMessage } from "./messages";

/**
 * Dataset releases as the routes see them: creating one (its build then runs on the release
 * queue, src/services/releases/build.ts), retrying a failed or stalled build, and reading releases
 * and their files. Unpublished releases exist only for superusers (`includeUnpublished`).
 */

export type ReleaseStatus = "building" | "published" | "failed";

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
export type ReleaseServices = Pick<Services, "db" | "log" | "bindings">;

/** A building release that has shown no sign of life this long may be retried (its build was lost). */
export const STALLED_AFTER_SECONDS = 10 * 60;

interface ReleaseRow {
  version: string;
  title: string;
  description: string | null;
  licence: string;
  status: ReleaseStatus;
  base_url: string;
  snapshot_at: number | null;
  created_at: number;
  published_at: number | null;
  records: number | null;
  base_products: number | null;
  images: number | null;
  record_materials: number | null;
  records_written: number;
  failure_reason: string | null;
  updated_at: number;
}

const RELEASE_COLUMNS = sql.raw(
  "version, title, description, licence, status, base_url, snapshot_at, created_at, published_at, records, base_products, images, " +
    "record_materials, records_written, failure_reason, updated_at",
);

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
  };
}

const visible = (includeUnpublished: boolean): SQL => (includeUnpublished ? sql`1 = 1` : sql`status = 'published'`);

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
  const rows = await svc.db.all<ReleaseRow>(sql`
    INSERT INTO releases (version, title, description, licence, status, base_url, build_id)
    VALUES (${input.version}, ${input.title}, ${input.description ?? null}, ${input.licence}, 'building', ${baseUrl}, ${buildId})
    ON CONFLICT (version) DO NOTHING
    RETURNING ${RELEASE_COLUMNS}`);
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
    sql`UPDATE releases SET status = 'building', build_id = ${buildId}, snapshot_at = NULL, records = NULL, base_products = NULL, images = NULL,
        record_materials = NULL, records_written = 0, build_state = NULL, lease_id = NULL, lease_until = NULL, build_failures = 0,
        failure_reason = NULL, updated_at = unixepoch()
      WHERE version = ${version} AND (status = 'failed' OR (status = 'building' AND coalesce(lease_until, 0) < unixepoch()
        AND updated_at < unixepoch() - ${STALLED_AFTER_SECONDS}))
      RETURNING ${RELEASE_COLUMNS}`,
    sql`SELECT status, build_id FROM releases WHERE version = ${version}`,
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
  const chosen =
    version === null
      ? sql`(SELECT version FROM releases WHERE status = 'published' ORDER BY created_at DESC, version DESC LIMIT 1)`
      : sql`${version}`;
  const [rows, files] = await batchRows<[ReleaseRow, { path: string; bytes: number; sha256: string; media_type: string }]>(db, [
    sql`SELECT ${RELEASE_COLUMNS} FROM releases WHERE version = ${chosen} AND ${visible(includeUnpublished)}`,
    sql`SELECT path, bytes, sha256, media_type FROM release_files
      WHERE release_version = ${chosen} AND substr(path, 1, 7) <> 'images/' ORDER BY path`,
  ]);
  const row = rows[0];
  if (!row) return null;
  return {
    release: toRelease(row),
    files: files.map((f) => ({ path: f.path, bytes: f.bytes, sha256: f.sha256, mediaType: f.media_type })),
  };
}

/** A page of releases, newest first, and how many there are, in one round trip. */
export async function listReleases(
  db: Db,
  page: { limit: number; offset: number },
  includeUnpublished: boolean,
): Promise<{ releases: Release[]; total: number }> {
  const [rows, counted] = await batchRows<[ReleaseRow, { total: number }]>(db, [
    sql`SELECT ${RELEASE_COLUMNS} FROM releases WHERE ${visible(includeUnpublished)}
      ORDER BY created_at DESC, version DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`SELECT count(*) AS total FROM releases WHERE ${visible(includeUnpublished)}`,
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
  const [rows] = await batchRows<[{ path: string; bytes: number; sha256: string; media_type: string; status: ReleaseStatus }]>(db, [
    sql`SELECT f.path, f.bytes, f.sha256, f.media_type, r.status FROM releases r
      JOIN release_files f ON f.release_version = r.version AND f.path = ${path}
      WHERE r.version = ${version} AND ${includeUnpublished ? sql`1 = 1` : sql`r.status = 'published'`}`,
  ]);
  const row = rows[0];
  if (!row) return null;
  return { path: row.path, bytes: row.bytes, sha256: row.sha256, mediaType: row.media_type, published: row.status === "published" };
}
