import { eq, type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnList, type RowOf } from "../../db/rows";
import { releases } from "../../db/schema";
import type { CsvWriterState } from "../../lib/release/csv-table-writer";
import type { MultipartSinkState } from "../../lib/release/multipart-sink";
import type { ParquetWriterState } from "../../lib/release/parquet-table-writer";
import type { PageCursor } from "./tables";

/**
 * The build's state in `releases` and the fenced writes that move it on. A build runs as slices,
 * one queue invocation each; an invocation works only while it holds the release's lease
 * (`lease_id` and `lease_until` on D1's clock), and every write it makes is conditional on that
 * lease and on the build attempt (`build_id`), so a duplicate or late message, or an attempt a
 * retry replaced, can never write into the release.
 */

/** What a build slice needs of the service container. */
export type ReleaseSliceServices = Pick<Services, "db" | "config" | "log" | "bindings"> & Partial<Pick<Services, "roundTrips">>;

/** The attempt and lease every write of a slice is fenced on. */
export interface BuildFence {
  readonly version: string;
  readonly buildId: string;
  readonly leaseId: string;
  /** How long the lease lasts from each renewal. */
  readonly leaseSeconds: number;
}

/** SQL over `releases` that holds while this slice still owns the build. */
export function fenced(fence: BuildFence): SQL {
  return sql`version = ${fence.version} AND build_id = ${fence.buildId} AND lease_id = ${fence.leaseId} AND status = 'building'`;
}

/** A table half written: where its rows stopped, and the states of its two files. */
export interface TableProgress {
  readonly cursor: PageCursor;
  readonly rows: number;
  readonly csv: { readonly sink: MultipartSinkState; readonly writer: CsvWriterState };
  readonly parquet: { readonly sink: MultipartSinkState; readonly writer: StoredParquetState };
}

/**
 * The Parquet writer's state with its footer metadata stored in R2 (`key`), checked by size and
 * SHA-256 when read back: the metadata grows with the table's row groups (about 2 MB, D1's largest
 * value, for the records of about 300,000 base products), the rest of the checkpoint does not.
 */
export interface StoredParquetState extends Omit<ParquetWriterState, "footer"> {
  readonly footer: { readonly key: string; readonly bytes: number; readonly sha256: string };
}

/** The checkpoint in `releases.build_state` (JSON). */
export interface BuildState {
  /** Index of the step the build is at (src/services/releases/build.ts, STEPS). */
  readonly step: number;
  /** The table being written, when the last slice stopped inside one. */
  readonly table: TableProgress | null;
  /** The image files being copied: the last one copied. */
  readonly images: { readonly cursor: string; readonly files: number } | null;
}

export const INITIAL_STATE: BuildState = { step: 0, table: null, images: null };

/** A file of the release, as `release_files` lists it. */
export interface WrittenFile {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly mediaType: string;
}

/** The release as a slice finds it when it takes the lease. */
export interface ClaimedBuild {
  readonly fence: BuildFence;
  readonly title: string;
  readonly description: string | null;
  readonly licence: string;
  readonly baseUrl: string;
  readonly publisher: string;
  readonly creator: string | null;
  readonly creatorRor: string | null;
  readonly snapshotAt: number | null;
  readonly counts: { records: number; baseProducts: number; images: number; recordMaterials: number } | null;
  readonly state: BuildState;
  readonly buildFailures: number;
}

export type Claim =
  | { kind: "claimed"; build: ClaimedBuild }
  /** No such release, another attempt's message, or the build has ended: nothing to do. */
  | { kind: "stale" }
  /** Another invocation holds the lease for about this many seconds more. */
  | { kind: "busy"; retryAfterSeconds: number };

/** The write of a slice that no longer holds the lease (it ran out, or a retry replaced the attempt). */
export class LeaseLost extends Error {
  override name = "LeaseLost";
}

/** What a claim reads of the release it took. */
const CLAIM_FIELDS = [
  "title",
  "description",
  "licence",
  "base_url",
  "publisher",
  "creator",
  "creator_ror",
  "snapshot_at",
  "records",
  "base_products",
  "images",
  "record_materials",
  "build_state",
  "build_failures",
] as const;

type ClaimRow = RowOf<typeof releases, (typeof CLAIM_FIELDS)[number]>;

/** Takes the lease of a building release for this attempt when nobody holds it, in one round trip. */
export async function claimBuild(db: Db, version: string, buildId: string, leaseSeconds: number): Promise<Claim> {
  const leaseId = crypto.randomUUID();
  const [claimed, current] = await batchRows<[ClaimRow, { status: string; build_id: string; remaining: number | null }]>(db, [
    // Raw: compare-and-set on the lease; the UPDATE's own condition decides who holds it.
    sql`UPDATE releases SET lease_id = ${leaseId}, lease_until = unixepoch() + ${leaseSeconds}, updated_at = unixepoch()
      WHERE version = ${version} AND build_id = ${buildId} AND status = 'building' AND (lease_until IS NULL OR lease_until < unixepoch())
      RETURNING ${columnList(CLAIM_FIELDS)}`,
    db
      .select({
        status: releases.status,
        build_id: releases.build_id,
        remaining: sql<number | null>`${releases.lease_until} - unixepoch()`.as("remaining"),
      })
      .from(releases)
      .where(eq(releases.version, version)),
  ]);
  const row = claimed[0];
  if (!row) {
    const found = current[0];
    if (found?.status === "building" && found.build_id === buildId)
      return { kind: "busy", retryAfterSeconds: Math.max(1, (found.remaining ?? 0) + 1) };
    return { kind: "stale" };
  }
  return {
    kind: "claimed",
    build: {
      fence: { version, buildId, leaseId, leaseSeconds },
      title: row.title,
      description: row.description,
      licence: row.licence,
      baseUrl: row.base_url,
      publisher: row.publisher,
      creator: row.creator,
      creatorRor: row.creator_ror,
      snapshotAt: row.snapshot_at,
      counts:
        row.snapshot_at === null
          ? null
          : {
              records: row.records ?? 0,
              baseProducts: row.base_products ?? 0,
              images: row.images ?? 0,
              recordMaterials: row.record_materials ?? 0,
            },
      state: row.build_state === null ? INITIAL_STATE : (JSON.parse(row.build_state) as BuildState),
      buildFailures: row.build_failures,
    },
  };
}

/** Inserts (or, for a file written again after an interruption, replaces) file rows, while the fence holds. */
function fileRows(fence: BuildFence, files: readonly WrittenFile[]): SQL {
  const json = JSON.stringify(files.map((f) => [f.path, f.bytes, f.sha256, f.mediaType]));
  // Raw: one INSERT … SELECT over JSON rows (json_each), fenced on the lease.
  return sql`INSERT OR REPLACE INTO release_files (release_version, path, bytes, sha256, media_type)
    SELECT ${fence.version}, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')
    FROM json_each(${json}) j WHERE EXISTS (SELECT 1 FROM releases WHERE ${fenced(fence)})`;
}

/**
 * Saves the build's checkpoint, with the files finished since the last one, in one batch: both or
 * neither. `release` gives the lease up (the slice ends); otherwise it is renewed. Progress resets
 * the count of failed attempts. Throws LeaseLost when the slice no longer owns the build.
 */
export async function saveState(
  db: Db,
  fence: BuildFence,
  state: BuildState,
  options: { files?: readonly WrittenFile[]; recordsWritten?: number; release?: boolean } = {},
): Promise<void> {
  const lease = options.release ? sql`lease_id = NULL, lease_until = NULL` : sql`lease_until = unixepoch() + ${fence.leaseSeconds}`;
  const statements: SQL[] = options.files?.length ? [fileRows(fence, options.files)] : [];
  // Raw (this and the fenced writes below): each is decided by its own condition, the lease (`fenced`).
  statements.push(sql`UPDATE releases SET build_state = ${JSON.stringify(state)}, records_written = coalesce(${options.recordsWritten ?? null}, records_written),
      build_failures = 0, ${lease}, updated_at = unixepoch()
    WHERE ${fenced(fence)} RETURNING 1 AS held`);
  const results = await batchRows<unknown[]>(db, statements);
  if ((results[results.length - 1] ?? []).length === 0) throw new LeaseLost(`the lease of release ${fence.version} was lost`);
}

/** Renews the lease and reports progress (rows of `records` written), in one round trip. */
export async function heartbeat(db: Db, fence: BuildFence, recordsWritten: number): Promise<void> {
  // Raw: fenced on the lease (compare-and-set).
  const rows =
    await db.all(sql`UPDATE releases SET records_written = ${recordsWritten}, lease_until = unixepoch() + ${fence.leaseSeconds}, updated_at = unixepoch()
    WHERE ${fenced(fence)} RETURNING 1 AS held`);
  if (rows.length === 0) throw new LeaseLost(`the lease of release ${fence.version} was lost`);
}

/**
 * Ends the attempt as `failed` with `reason` (shown to superusers). False when the slice no longer
 * owned the build (nothing changed). The caller empties the staging tables afterwards.
 */
export async function markFailed(db: Db, fence: BuildFence, reason: string): Promise<boolean> {
  // Raw: fenced on the lease (compare-and-set), and the clean-up guarded by the failure it follows.
  const [rows] = await batchRows<[unknown, unknown]>(db, [
    sql`UPDATE releases SET status = 'failed', failure_reason = ${reason.slice(0, 1000)}, build_state = NULL,
      lease_id = NULL, lease_until = NULL, updated_at = unixepoch()
    WHERE ${fenced(fence)} RETURNING 1 AS held`,
    // A snapshot being copied stops there: no more earlier versions to keep.
    sql`DELETE FROM release_snapshot_progress WHERE release_version = ${fence.version}
      AND EXISTS (SELECT 1 FROM releases WHERE version = ${fence.version} AND build_id = ${fence.buildId} AND status = 'failed')`,
  ]);
  return rows.length > 0;
}

/**
 * Counts a failed attempt and gives the lease up, saving `state` (the checkpoint to go on from).
 * Returns the failed attempts in a row, or null when the slice no longer owned the build.
 */
export async function recordFailure(db: Db, fence: BuildFence, state: BuildState, recordsWritten: number): Promise<number | null> {
  // Raw: fenced on the lease (compare-and-set).
  const rows = await db.all<{
    failures: number;
  }>(sql`UPDATE releases SET build_failures = build_failures + 1, build_state = ${JSON.stringify(state)},
      records_written = ${recordsWritten}, lease_id = NULL, lease_until = NULL, updated_at = unixepoch()
    WHERE ${fenced(fence)} RETURNING build_failures AS failures`);
  return rows[0]?.failures ?? null;
}
