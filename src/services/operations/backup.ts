import { and, eq, lt, lte, ne, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { backupRuns } from "../../db/schema";
import { GzipMember } from "../../lib/backup/gzip-members";
import { MultipartSink } from "../../lib/release/multipart-sink";
import { deletePrefix } from "../releases/storage";
import { type BackupPlan, BackupPlanError, type FileSource, fileSource, makePlan, type PageRow, readGenerations } from "./backup-plan";
import {
  type BackupFence,
  type BackupFile,
  type BackupState,
  claimRun,
  heartbeat,
  LeaseLost,
  markComplete,
  markFailed,
  recordFailure,
  saveState,
} from "./backup-state";
import type { MaintenanceMessage } from "./maintenance-messages";

/**
 * The logical backup of D1 to R2 (docs/operations.md, Backups): started by the Cron Trigger named
 * `BACKUP_CRON`, run on the maintenance queue as slices like a release build (each works until its
 * deadline, saves a checkpoint and hands on; a slice that dies is retried from the last
 * checkpoint), it writes `backups/<id>/<table>.sql.gz` per table (gzip of multi-row `INSERT`s),
 * then `backups/<id>/<index>.sql.gz` per full-text index over another table's content (the
 * statements that index again the rows it holds; backup-plan.ts), and, last,
 * `backups/<id>/manifest.json` with the schema, each file's rows, size and SHA-256.
 * No query holds the database for long: a page is one indexed range of rowids. A complete run
 * deletes the backups older than `BACKUP_RETENTION_DAYS`. `npm run restore` loads one into an
 * empty database (scripts/restore.mjs).
 */

export const BACKUP_PREFIX = "backups/";
/**
 * The manifest's `format` (scripts/backup/restore-core.mjs reads this one and /1). /2: a file per
 * full-text index listing the rows it holds (`indexes`), where /1 had the restore rebuild each
 * from all of its content (`rebuild`).
 */
export const BACKUP_FORMAT = "relab-d1-backup/2";

/** What a backup slice needs of the service container. */
export type BackupServices = Pick<Services, "db" | "config" | "log" | "bindings">;

export type BackupOutcome =
  | { kind: "continue" }
  | { kind: "complete" }
  | { kind: "failed"; reason: string }
  | { kind: "stale" }
  | { kind: "busy"; retryAfterSeconds: number }
  | { kind: "retry"; error: unknown };

/** Attempts that may fail in a row before the run is given up as `failed`. */
export const MAX_BACKUP_FAILURES = 5;
/** Rows per page (one D1 round trip). */
const PAGE_ROWS = 1_000;
/** A checkpoint (and a new gzip member) at least this often, so that a dying slice loses little. */
const CHECKPOINT_MS = 10_000;
const HEARTBEAT_MS = 5_000;
const LEASE_MARGIN_SECONDS = 120;
/** A run still `running` this long after it began lost its messages: the next start marks it failed. */
const STUCK_AFTER_SECONDS = 24 * 3600;

/** `20260501T031700Z`: the scheduled time in ISO 8601 basic form, a name that sorts by time and needs no quoting. */
export function backupId(at: number): string {
  return new Date(Math.floor(at / 1000) * 1000).toISOString().replaceAll("-", "").replaceAll(":", "").replace(".000Z", "Z");
}

/** The time (epoch ms) a backup id names, or null for a key that is not one. */
export function backupTime(id: string): number | null {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(id);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  const time = Date.UTC(y, mo - 1, d, h, mi, s);
  return backupId(time) === id ? time : null;
}

const fileKey = (id: string, file: string) => `${BACKUP_PREFIX}${id}/${file}`;
/** A table's or an index's file: its name, percent-encoded should it hold anything but [A-Za-z0-9_]. */
const tableFile = (table: string) => `${/^[A-Za-z0-9_]+$/.test(table) ? table : encodeURIComponent(table)}.sql.gz`;

/**
 * Starts a backup named by `at` (the Cron Trigger's scheduled time) and queues its first slice;
 * null when one is running already (or this one started: a duplicate trigger). A run stuck for a
 * day is marked failed first.
 */
export async function startBackup(svc: Pick<Services, "db" | "log" | "bindings">, at: number): Promise<string | null> {
  const id = backupId(at);
  const [, started] = await batchRows<[never, { id: string }]>(svc.db, [
    svc.db
      .update(backupRuns)
      .set({
        status: "failed",
        finished_at: sql`unixepoch()`,
        failure_reason: "no progress for a day: its messages were lost",
        state: null,
        lease_id: null,
        lease_until: null,
      })
      .where(and(eq(backupRuns.status, "running"), lte(backupRuns.started_at, sql`unixepoch() - ${STUCK_AFTER_SECONDS}`))),
    // Raw: INSERT … SELECT guarded by no run being under way (the NOT EXISTS), so two triggers start one run.
    sql`INSERT INTO backup_runs (id, status, started_at) SELECT ${id}, 'running', unixepoch()
      WHERE NOT EXISTS (SELECT 1 FROM backup_runs WHERE status = 'running')
      ON CONFLICT (id) DO NOTHING RETURNING id`,
  ]);
  if (started.length === 0) {
    svc.log.warn("backup not started: another is running, or this one started already", { backup: id });
    return null;
  }
  try {
    await svc.bindings.MAINTENANCE_QUEUE.send({ type: "backup.run", id } satisfies MaintenanceMessage, { contentType: "json" });
  } catch (error) {
    // Nothing was written yet: without the row, the next trigger starts afresh.
    // Raw: guarded undo; the row goes only while no slice has written a checkpoint.
    await svc.db.run(sql`DELETE FROM backup_runs WHERE id = ${id} AND state IS NULL`);
    throw error;
  }
  svc.log.info("backup started", { backup: id });
  return id;
}

/** Runs one slice of a backup until `deadline` (epoch ms). Never throws: every outcome is a value. */
export async function runBackupSlice(svc: BackupServices, id: string, deadline: number): Promise<BackupOutcome> {
  const leaseSeconds = Math.ceil(Math.max(0, deadline - Date.now()) / 1000) + LEASE_MARGIN_SECONDS;
  let claim;
  try {
    claim = await claimRun(svc.db, id, leaseSeconds);
  } catch (error) {
    return { kind: "retry", error };
  }
  if (claim.kind !== "claimed") return claim;
  const slice = new BackupSlice(svc, claim.fence, claim.state, claim.failures, claim.startedAt, deadline);
  try {
    return await slice.run();
  } catch (error) {
    return slice.failed(error);
  }
}

class BackupSlice {
  private sink: MultipartSink | null = null;
  private lastHeartbeat = Date.now();
  private readonly started = Date.now();
  private rowsThisSlice = 0;

  constructor(
    private readonly svc: BackupServices,
    private readonly fence: BackupFence,
    private state: BackupState,
    private readonly failures: number,
    private readonly startedAt: number,
    private readonly deadline: number,
  ) {}

  private get bucket(): R2Bucket {
    return this.svc.bindings.UPLOADS;
  }

  private timeUp(): boolean {
    return Date.now() >= this.deadline;
  }

  async run(): Promise<BackupOutcome> {
    let worked = false;
    if (this.state.plan === null) {
      // A fresh run: whatever an earlier attempt of this id left goes first.
      await deletePrefix(this.bucket, fileKey(this.fence.id, ""));
      this.state = { plan: await makePlan(this.svc.db), table: 0, progress: null, files: [] };
      await saveState(this.svc.db, this.fence, this.state);
      worked = true;
    }
    const plan = this.state.plan!;
    if (!Array.isArray(plan.indexes))
      throw new BackupPlanError(
        "This run was planned by an earlier version of the backup (no list of full-text indexes); the next one starts afresh.",
      );
    // The tables' files, then the indexes': an index's rows are read after its content's.
    const files = [...plan.tables, ...plan.indexes];
    while (this.state.table < files.length) {
      // Every slice moves the run on by at least a page before it looks at the clock.
      if (worked && this.timeUp()) return this.pause();
      worked = true;
      if (!(await this.writeFile(fileSource(files[this.state.table]!)))) return this.pause();
    }
    await this.finish(plan);
    return { kind: "complete" };
  }

  private async pause(): Promise<BackupOutcome> {
    await saveState(this.svc.db, this.fence, this.state, true);
    this.svc.log.info("backup slice ended", {
      backup: this.fence.id,
      table: this.state.table,
      rows: this.rowsThisSlice,
      ms: Date.now() - this.started,
    });
    return { kind: "continue" };
  }

  /**
   * Writes one table's or index's file, continuing from the checkpoint when an earlier slice
   * stopped inside it. True when the file is complete; false when the deadline came first (a
   * checkpoint is in `state`).
   */
  private async writeFile(source: FileSource): Promise<boolean> {
    const { id } = this.fence;
    const saved = this.state.progress;
    const key = fileKey(id, tableFile(source.name));
    const sink = saved
      ? await MultipartSink.resume(this.bucket, saved.sink)
      : MultipartSink.create(this.bucket, key, {
          contentType: "application/gzip",
          checkpointKey: fileKey(id, `checkpoints/${tableFile(source.name)}.tail`),
        });
    this.sink = sink;
    let cursor = saved?.cursor ?? 0;
    let rows = saved?.rows ?? 0;
    const members = [...(saved?.members ?? [])];
    let member = new GzipMember(sink);
    let lastCheckpoint = Date.now();
    const statement = this.svc.db.$client.prepare(source.query);
    for (;;) {
      const page = source.cut === null ? [] : await statement.bind(cursor, source.cut, PAGE_ROWS).raw<PageRow>();
      if (page.length > 0) {
        await member.write(source.text(page));
        cursor = page[page.length - 1]![0];
        rows += page.length;
        this.rowsThisSlice += page.length;
      }
      if (page.length < PAGE_ROWS) break;
      const timeUp = this.timeUp();
      if (timeUp || Date.now() - lastCheckpoint >= CHECKPOINT_MS) {
        members.push(await member.finish());
        const progress = { cursor, rows, members: [...members], sink: await sink.checkpoint() };
        this.state = { ...this.state, progress };
        if (timeUp) {
          this.sink = null;
          return false;
        }
        await saveState(this.svc.db, this.fence, this.state);
        this.lastHeartbeat = lastCheckpoint = Date.now();
        member = new GzipMember(sink);
      } else if (Date.now() - this.lastHeartbeat >= HEARTBEAT_MS) {
        await heartbeat(this.svc.db, this.fence);
        this.lastHeartbeat = Date.now();
      }
    }
    members.push(await member.finish());
    const stored = await sink.close();
    this.sink = null;
    const file: BackupFile = {
      table: source.name,
      file: tableFile(source.name),
      rows,
      bytes: stored.bytes,
      sha256: stored.sha256,
      members,
    };
    this.state = { ...this.state, table: this.state.table + 1, progress: null, files: [...this.state.files, file] };
    await saveState(this.svc.db, this.fence, this.state);
    return true;
  }

  /** The manifest (written last: its presence marks a complete backup), the run's end, and the retention. */
  private async finish(plan: BackupPlan): Promise<void> {
    const { id } = this.fence;
    const generationsNow = plan.generations === null ? null : await readGenerations(this.svc.db);
    const files = this.state.files;
    const manifest = {
      format: BACKUP_FORMAT,
      id,
      started_at: new Date(this.startedAt * 1000).toISOString(),
      finished_at: new Date().toISOString(),
      // Whether anything the read caches show changed while the backup ran: a restore of a backup
      // that saw writes gives the caches fresh generations rather than ones a copy may carry.
      read_generations:
        plan.generations === null
          ? null
          : {
              at_start: plan.generations,
              at_end: generationsNow,
              changed: JSON.stringify(plan.generations) !== JSON.stringify(generationsNow),
            },
      schema: plan.schema,
      // Created by their virtual table, never copied.
      shadow: plan.shadow,
      tables: plan.tables.map((table) => {
        const { table: _, ...file } = files.find((f) => f.table === table.name)!;
        return { name: table.name, columns: table.columns, rowid: table.rowid, ...file };
      }),
      // Each file lists the rows of `content` the index holds (`rows` of them), as statements
      // that index them again once the content is back.
      indexes: plan.indexes.map((index) => {
        const { table: _, ...file } = files.find((f) => f.table === index.name)!;
        return {
          name: index.name,
          columns: index.columns,
          content: index.content,
          content_rowid: index.contentRowid,
          source: index.source,
          ...file,
        };
      }),
    };
    const body = new TextEncoder().encode(JSON.stringify(manifest, null, 1));
    await this.bucket.put(fileKey(id, "manifest.json"), body, { httpMetadata: { contentType: "application/json" } });
    // Rows of tables; the bytes of every file, the indexes' included.
    const totals = {
      tables: plan.tables.length,
      rows: manifest.tables.reduce((sum, f) => sum + f.rows, 0),
      bytes: files.reduce((sum, f) => sum + f.bytes, 0) + body.length,
    };
    if (!(await markComplete(this.svc.db, this.fence, totals)))
      throw new LeaseLost(`the lease of backup ${id} was lost before it completed`);
    this.svc.log.info("backup complete", { backup: id, ...totals, read_generations_changed: manifest.read_generations?.changed ?? null });
    try {
      await pruneBackups(this.svc, id);
    } catch (error) {
      this.svc.log.warn("old backups could not be deleted; the next complete backup tries again", { error });
    }
  }

  /**
   * After a throw: a lost lease ends the slice quietly; a plan error (a table the format cannot
   * hold) or MAX_BACKUP_FAILURES in a row ends the run `failed` and deletes its files; anything
   * else counts a failure, which the queue retries, restarting the table it was in.
   */
  async failed(error: unknown): Promise<BackupOutcome> {
    const log = this.svc.log;
    const { id } = this.fence;
    if (error instanceof LeaseLost) {
      log.warn("backup slice lost its lease", { backup: id });
      return { kind: "stale" };
    }
    await this.discardUpload();
    const permanent = error instanceof BackupPlanError;
    const reason = permanent
      ? (error as Error).message
      : `The backup failed ${MAX_BACKUP_FAILURES} times in a row; last: ${describe(error)}`;
    try {
      if (permanent || this.failures + 1 >= MAX_BACKUP_FAILURES) {
        if (!(await markFailed(this.svc.db, this.fence, reason))) return { kind: "stale" };
        log.error("backup failed", { backup: id, reason, error });
        await deletePrefix(this.bucket, fileKey(id, "")).catch(() => undefined);
        return { kind: "failed", reason };
      }
      const failures = await recordFailure(this.svc.db, this.fence, { ...this.state, progress: null });
      if (failures === null) return { kind: "stale" };
      log.warn("backup slice failed; it will be retried", { backup: id, failures, error });
      return { kind: "retry", error };
    } catch (second) {
      log.error("backup slice failed and could not record it", { backup: id, error, second });
      return { kind: "retry", error };
    }
  }

  private async discardUpload(): Promise<void> {
    const settle = (work: Promise<unknown>) => work.catch(() => undefined);
    if (this.sink) await settle(this.sink.abort());
    if (this.state.progress) await settle(MultipartSink.discard(this.bucket, this.state.progress.sink));
  }
}

/**
 * Deletes the backups (their files and runs) that began more than `BACKUP_RETENTION_DAYS` before
 * the run `keep`, which just completed; `keep` itself always stays. Only folders whose names are
 * backup ids are touched.
 */
export async function pruneBackups(svc: Pick<BackupServices, "db" | "config" | "log" | "bindings">, keep: string): Promise<string[]> {
  const keepTime = backupTime(keep);
  if (keepTime === null) return [];
  const cutoff = keepTime - svc.config.backup.retentionDays * 86_400_000;
  const bucket = svc.bindings.UPLOADS;
  const old: string[] = [];
  let cursor: string | undefined;
  do {
    const listing = await bucket.list({ prefix: BACKUP_PREFIX, delimiter: "/", ...(cursor ? { cursor } : {}) });
    for (const prefix of listing.delimitedPrefixes) {
      const id = prefix.slice(BACKUP_PREFIX.length, -1);
      const time = backupTime(id);
      if (time !== null && time < cutoff && id !== keep) old.push(id);
    }
    cursor = listing.truncated ? listing.cursor : undefined;
  } while (cursor);
  for (const id of old) await deletePrefix(bucket, fileKey(id, ""));
  await svc.db.run(
    svc.db
      .delete(backupRuns)
      .where(and(lt(backupRuns.started_at, Math.floor(cutoff / 1000)), ne(backupRuns.id, keep), ne(backupRuns.status, "running"))),
  );
  if (old.length > 0) svc.log.info("old backups deleted", { backups: old, retention_days: svc.config.backup.retentionDays });
  return old;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 500) : String(error).slice(0, 500);
}
