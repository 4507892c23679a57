import { eq, sql } from "drizzle-orm";
import { batchRows, type Db } from "../../db/client";
import { backupRuns } from "../../db/schema";
import type { MultipartSinkState } from "../../lib/release/multipart-sink";
import type { BackupPlan } from "./backup-plan";

/**
 * A backup run's row in `backup_runs` and the fenced writes that move it on, as a release build's
 * (src/services/releases/build-state.ts): a slice works only while it holds the run's lease, and
 * every write it makes is conditional on that lease, so a duplicate or late message never writes.
 */

export interface BackupFence {
  readonly id: string;
  readonly leaseId: string;
  readonly leaseSeconds: number;
}

/** A table's or a full-text index's file, finished. */
export interface BackupFile {
  /** The table's or the index's name. */
  readonly table: string;
  /** Relative to the backup's folder. */
  readonly file: string;
  readonly rows: number;
  readonly bytes: number;
  readonly sha256: string;
  /** The length of each gzip member, in order (one per checkpoint; src/lib/backup/gzip-members.ts). */
  readonly members: readonly number[];
}

/** A table half written: where its rows stopped, the members so far and the upload. */
export interface TableProgress {
  readonly cursor: number;
  readonly rows: number;
  readonly members: readonly number[];
  readonly sink: MultipartSinkState;
}

/** The checkpoint in `backup_runs.state` (JSON). */
export interface BackupState {
  readonly plan: BackupPlan | null;
  /** Which file is being written: an index into plan.tables, then on into plan.indexes. */
  readonly table: number;
  readonly progress: TableProgress | null;
  readonly files: readonly BackupFile[];
}

export const INITIAL_STATE: BackupState = { plan: null, table: 0, progress: null, files: [] };

export type Claim =
  | { kind: "claimed"; fence: BackupFence; state: BackupState; failures: number; startedAt: number }
  | { kind: "stale" }
  | { kind: "busy"; retryAfterSeconds: number };

export class LeaseLost extends Error {
  override name = "LeaseLost";
}

/** SQL over `backup_runs` that holds while this slice owns the run: every write below is conditional on it (hand-written, compare-and-set). */
const held = (fence: BackupFence) => sql`id = ${fence.id} AND lease_id = ${fence.leaseId} AND status = 'running'`;

/** Takes the run's lease when nobody holds it, in one round trip. */
export async function claimRun(db: Db, id: string, leaseSeconds: number): Promise<Claim> {
  const leaseId = crypto.randomUUID();
  const [claimed, current] = await batchRows<
    [{ state: string | null; failures: number; started_at: number }, { status: string; remaining: number | null }]
  >(db, [
    // Raw: compare-and-set on the lease; the UPDATE's own condition decides who holds it.
    sql`UPDATE backup_runs SET lease_id = ${leaseId}, lease_until = unixepoch() + ${leaseSeconds}
      WHERE id = ${id} AND status = 'running' AND (lease_until IS NULL OR lease_until < unixepoch())
      RETURNING state, failures, started_at`,
    db
      .select({ status: backupRuns.status, remaining: sql<number | null>`${backupRuns.lease_until} - unixepoch()`.as("remaining") })
      .from(backupRuns)
      .where(eq(backupRuns.id, id)),
  ]);
  const row = claimed[0];
  if (!row) {
    const found = current[0];
    if (found?.status === "running") return { kind: "busy", retryAfterSeconds: Math.max(1, (found.remaining ?? 0) + 1) };
    return { kind: "stale" };
  }
  return {
    kind: "claimed",
    fence: { id, leaseId, leaseSeconds },
    state: row.state === null ? INITIAL_STATE : (JSON.parse(row.state) as BackupState),
    failures: row.failures,
    startedAt: row.started_at,
  };
}

/** Saves the checkpoint (progress resets the failure count); `release` gives the lease up. Throws LeaseLost. */
export async function saveState(db: Db, fence: BackupFence, state: BackupState, release = false): Promise<void> {
  const lease = release ? sql`lease_id = NULL, lease_until = NULL` : sql`lease_until = unixepoch() + ${fence.leaseSeconds}`;
  // Raw (this and the run's writes below): fenced on the lease (`held`, compare-and-set).
  const rows = await db.all(sql`UPDATE backup_runs SET state = ${JSON.stringify(state)}, failures = 0, ${lease}
    WHERE ${held(fence)} RETURNING 1 AS held`);
  if (rows.length === 0) throw new LeaseLost(`the lease of backup ${fence.id} was lost`);
}

/** Renews the lease. Throws LeaseLost. */
export async function heartbeat(db: Db, fence: BackupFence): Promise<void> {
  const rows = await db.all(
    sql`UPDATE backup_runs SET lease_until = unixepoch() + ${fence.leaseSeconds} WHERE ${held(fence)} RETURNING 1 AS held`,
  );
  if (rows.length === 0) throw new LeaseLost(`the lease of backup ${fence.id} was lost`);
}

/** Ends the run `complete` with its totals; the checkpoint goes. False when the slice no longer owned it. */
export async function markComplete(db: Db, fence: BackupFence, totals: { tables: number; rows: number; bytes: number }): Promise<boolean> {
  const rows = await db.all(sql`UPDATE backup_runs SET status = 'complete', finished_at = unixepoch(), state = NULL, lease_id = NULL,
      lease_until = NULL, tables = ${totals.tables}, rows = ${totals.rows}, bytes = ${totals.bytes}
    WHERE ${held(fence)} RETURNING 1 AS held`);
  return rows.length > 0;
}

/** Ends the run `failed` with `reason`. False when the slice no longer owned it. */
export async function markFailed(db: Db, fence: BackupFence, reason: string): Promise<boolean> {
  const rows =
    await db.all(sql`UPDATE backup_runs SET status = 'failed', finished_at = unixepoch(), failure_reason = ${reason.slice(0, 1000)},
      state = NULL, lease_id = NULL, lease_until = NULL
    WHERE ${held(fence)} RETURNING 1 AS held`);
  return rows.length > 0;
}

/** Counts a failed attempt, saves `state` to go on from and gives the lease up; the failures in a row, or null when not owned. */
export async function recordFailure(db: Db, fence: BackupFence, state: BackupState): Promise<number | null> {
  const rows = await db.all<{ failures: number }>(sql`UPDATE backup_runs SET failures = failures + 1, state = ${JSON.stringify(state)},
      lease_id = NULL, lease_until = NULL
    WHERE ${held(fence)} RETURNING failures`);
  return rows[0]?.failures ?? null;
}
