import { eq, type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows, costFields, type Db, QUERY_BUDGET } from "../../db/client";
import { columnsOf, type RowOf } from "../../db/rows";
import { deletionJobs, hiddenRecords } from "../../db/schema";
import { queuePurge } from "../media/messages";
import { ancestorsOrSelf, detachStatement } from "../products/hidden";

// Deletion jobs (docs/storage.md, "Deletion jobs"): a deletion too large for one batch (a record
// whose subtree holds more than `deletionSliceRecords` records, an account with more records than
// that) is asked for in one small batch that makes it final for every reader (the record hidden,
// the account closed) and inserts a `deletion_jobs` row; the deletion queue then removes the rows
// in slices. Each slice is ONE batch, atomic in D1: it removes a bounded number of records and
// counts its progress in the same transaction, so a slice that dies leaves nothing half-done and
// the queue's retry goes on from where the last slice ended. Slices are idempotent: two
// deliveries of a message find the rows already gone and do nothing twice.

/** The queue of deletion jobs (wrangler.jsonc, `DELETION_QUEUE`). */
export const DELETION_QUEUE = "relab-deletions";

/** Work on this job for a while (`deletionRunMs`); what is left goes to a new message. */
export interface DeletionMessage {
  type: "deletion.run";
  job_id: string;
}

export function isDeletionMessage(body: unknown): body is DeletionMessage {
  const message = body as Partial<DeletionMessage> | null;
  return message?.type === "deletion.run" && typeof message.job_id === "string";
}

export type DeletionServices = Pick<Services, "db" | "roundTrips" | "config" | "log" | "bindings" | "events">;

/**
 * Rows per slice, from `deletionSliceRecords` (n): a slice that deletes removes n records with
 * their bills of materials, media rows and search entries (at 30,000 products, 2,000 records took
 * 0.2 to 0.4 s of D1 time on this machine); one that moves records to the system account changes
 * only their owner (and the triggers' generations), 2.5n of them in about the same time; one that
 * hides base products detaches n/4 of them: a base product leaving the list takes every one of
 * its index entries and counters along (migration 0024), about 0.7 ms each at 30,000 products, so
 * 5,000 in one statement held the database for 3.2 to 7 s, in the request that closes the
 * account. The account deletions of bench/scale-writes.mjs measure them (bench/README.md, "Scale").
 */
export function sliceSizes(n: number) {
  return { purge: n, reown: Math.ceil(2.5 * n), hide: Math.ceil(n / 4) };
}

const JOB_FIELDS = ["id", "kind", "record_id", "user_id", "content", "records_done", "slices"] as const;

type JobRow = RowOf<typeof deletionJobs, (typeof JOB_FIELDS)[number]> & {
  /** `record`: the tree of the hidden record. */
  root_id: number | null;
};

/** A new job's id. */
export function newJobId(): string {
  return crypto.randomUUID();
}

/**
 * Statements that start the deletion of record `recordId` as job `jobId` (owner `ownerId`), while
 * `stillThere` (SQL over `p`, the record) holds: the job row, the record named hidden, and the
 * record detached. Nothing happens when the record is already gone or hidden (a deletion racing
 * this one): the first statement returns no row. The caller starts the job (`startDeletionJob`).
 */
export function recordJobStatements(jobId: string, recordId: number, ownerId: number, stillThere: SQL): SQL[] {
  // Raw: INSERT … SELECT under a guard, each statement run only while the one before took effect (and `stillThere` is the caller's SQL).
  return [
    sql`INSERT INTO deletion_jobs (id, kind, record_id, user_id)
      SELECT ${jobId}, 'record', ${recordId}, ${ownerId} WHERE EXISTS (SELECT 1 FROM products p WHERE p.id = ${recordId} AND ${stillThere})
      RETURNING id`,
    sql`INSERT INTO hidden_records (record_id, root_id, job_id)
      SELECT id, root_id, ${jobId} FROM products WHERE id = ${recordId} AND EXISTS (SELECT 1 FROM deletion_jobs WHERE id = ${jobId})`,
    detachStatement(sql`SELECT record_id FROM hidden_records WHERE job_id = ${jobId}`),
  ];
}

/**
 * The base products of account `userId` a hide slice takes: the first `limit` not hidden yet.
 * Raw: the bounded slice, a sub-select of the hide statements (`FROM (…)`, `IN (…)`).
 */
function unhiddenBases(userId: number, limit: number): SQL {
  return sql`SELECT id FROM products WHERE owner_id = ${userId} AND parent_id IS NULL ORDER BY id LIMIT ${limit}`;
}

/**
 * Statements that hide up to `limit` base products of account `userId` for job `jobId` (the
 * `delete` variant of an account deletion): named in `hidden_records`, then detached. The first
 * returns the ids it hid.
 */
export function hideAccountStatements(jobId: string, userId: number, limit: number, guard: SQL = sql`1`): SQL[] {
  const bases = unhiddenBases(userId, limit);
  // Raw: INSERT … SELECT of a bounded slice under the caller's `guard`; the detach takes exactly the rows it named.
  return [
    sql`INSERT INTO hidden_records (record_id, root_id, job_id) SELECT id, id, ${jobId} FROM (${bases}) WHERE ${guard} RETURNING record_id`,
    detachStatement(sql`SELECT record_id FROM hidden_records WHERE job_id = ${jobId} AND record_id IN (${bases})`),
  ];
}

/** Logs a job that a request started (`what`: its kind, record and user) and sends its first message. */
export async function startDeletionJob(
  svc: Pick<Services, "bindings" | "log">,
  jobId: string,
  what: { kind: "record" | "account"; record_id?: number; user_id: number; content?: string },
): Promise<void> {
  svc.log.info("deletion job started", { job_id: jobId, ...what });
  await queueDeletionJob(svc, jobId);
}

/** Sends the job's next message. A send that fails is logged: the scheduled sweep queues jobs that stopped moving. */
export async function queueDeletionJob(svc: Pick<Services, "bindings" | "log">, jobId: string): Promise<boolean> {
  try {
    await svc.bindings.DELETION_QUEUE.send({ type: "deletion.run", job_id: jobId } satisfies DeletionMessage, { contentType: "json" });
    return true;
  } catch (error) {
    svc.log.error("deletion job could not be queued; the scheduled sweep queues it again", { job_id: jobId, error });
    return false;
  }
}

async function loadJob(db: Db, jobId: string): Promise<JobRow | null> {
  const rows = await db.all<JobRow>(
    db
      .select({ ...columnsOf(deletionJobs, JOB_FIELDS), root_id: hiddenRecords.root_id })
      .from(deletionJobs)
      .leftJoin(hiddenRecords, eq(hiddenRecords.record_id, deletionJobs.record_id))
      .where(eq(deletionJobs.id, jobId)),
  );
  return rows[0] ?? null;
}

/** The records job `job` still has to remove, as SQL over `p`. Raw: composed into the slices' statements, a component's with a recursive CTE. */
function scopeOf(job: JobRow): SQL {
  if (job.kind === "account") return sql`p.owner_id = ${job.user_id}`;
  const recordId = job.record_id!;
  const rootId = job.root_id ?? recordId;
  if (rootId === recordId) return sql`p.root_id = ${rootId}`;
  // A component's subtree: its records came after it (ids grow with creation), in its tree, below it.
  return sql`p.root_id = ${rootId} AND p.id >= ${recordId} AND ${recordId} IN (${ancestorsOrSelf("p")})`;
}

export type JobOutcome =
  /** The job is finished (or was already): nothing left to do. */
  | { kind: "done" }
  /** Time is up with work left: send the next message. */
  | { kind: "continue" };

/**
 * Works on job `jobId` one slice after the other until it is finished or `deadline` (epoch ms)
 * has passed; at least one slice runs. A slice that fails throws, having changed nothing: the
 * queue retries the message.
 */
export async function runDeletionJob(svc: DeletionServices, jobId: string, options: { deadline: number }): Promise<JobOutcome> {
  const job = await loadJob(svc.db, jobId);
  if (!job) return { kind: "done" };
  const started = Date.now();
  const sizes = sliceSizes(svc.config.deletionSliceRecords);
  let hiding = job.kind === "account" && job.content === "delete";
  let slices = 0;
  let records = 0;
  for (;;) {
    // Past the deadline, or near D1's limit of queries per invocation: the rest in a new message.
    if (slices > 0 && (Date.now() >= options.deadline || svc.roundTrips.statements >= QUERY_BUDGET)) {
      svc.log.info("deletion job continues", {
        job_id: job.id,
        kind: job.kind,
        record_id: job.record_id,
        user_id: job.user_id,
        slices,
        records,
        ms: Date.now() - started,
        ...costFields(svc.roundTrips),
      });
      return { kind: "continue" };
    }
    if (hiding) {
      const [hidden] = await batchRows<[{ record_id: number }, unknown, unknown]>(svc.db, [
        // The slice hides only while the job exists (a guard of the statement itself).
        ...(hideAccountStatements(job.id, job.user_id, sizes.hide, sql`EXISTS (SELECT 1 FROM deletion_jobs WHERE id = ${job.id})`) as [
          SQL,
          SQL,
        ]),
        svc.db
          .update(deletionJobs)
          .set({ slices: sql`${deletionJobs.slices} + 1`, updated_at: sql`unixepoch()` })
          .where(eq(deletionJobs.id, job.id)),
      ]);
      hiding = hidden.length === sizes.hide;
      // A look that found nothing left to hide is no slice of work: the purge follows at once.
      if (hidden.length > 0) slices++;
      continue;
    }
    slices++;
    const slice =
      job.kind === "account" && job.content === "anonymize"
        ? await reownSlice(svc, job, sizes.reown)
        : await purgeSlice(svc, job, sizes.purge);
    records += slice.records;
    // Another delivery of the job's message finished it meanwhile (and told the listeners).
    if (slice.gone) return { kind: "done" };
    if (slice.finished) {
      svc.log.info("deletion job finished", {
        job_id: job.id,
        kind: job.kind,
        record_id: job.record_id,
        user_id: job.user_id,
        content: job.content,
        records_done: job.records_done + records,
        slices: job.slices + slices,
        ms: Date.now() - started,
        // This message's share of the work (a job that ran in several messages logged each one's).
        message_slices: slices,
        ...costFields(svc.roundTrips),
      });
      if (job.kind === "record") await svc.events.publish({ type: "records.deleted", ids: [job.record_id!] });
      else await svc.events.publish({ type: "account.deleted", userId: job.user_id });
      return { kind: "done" };
    }
  }
}

interface SliceResult {
  records: number;
  /** This slice ended the job. */
  finished: boolean;
  /** The job was no longer there when the slice ran. */
  gone: boolean;
}

/** SQL counting the rows of `select`. */
const countOf = (select: SQL) => sql`(SELECT count(*) FROM (${select}))`;

/**
 * One slice that deletes: the `purge` highest-id records of the job (children always have higher
 * ids than their parents, so no slice's cascade reaches a record of a later one), their media rows'
 * objects queued for purging and, for a record job, their share of the owner's upload quota
 * released; the job's progress counted; and, once nothing is left, the job ended (an account's
 * row deleted with it). One batch.
 */
async function purgeSlice(svc: DeletionServices, job: JobRow, purge: number): Promise<SliceResult> {
  const scope = scopeOf(job);
  const chunk = sql`SELECT p.id FROM products p WHERE ${scope} ORDER BY p.id DESC LIMIT ${purge}`;
  const media = sql`WITH m(kind, storage_key, size_bytes, charged) AS (
      SELECT 'images', storage_key, size_bytes, status <> 'rejected' FROM images WHERE product_id IN (${chunk})
      UNION ALL SELECT 'files', storage_key, size_bytes, status <> 'rejected' FROM files WHERE product_id IN (${chunk}))`;
  // Raw (the whole slice): statements composed from the job's scope over a bounded chunk (a LIMIT sub-select),
  // a CTE over both media tables, and writes guarded by what is left.
  const statements: SQL[] = [
    sql`${media} SELECT DISTINCT kind, storage_key FROM m`,
    sql`UPDATE deletion_jobs SET records_done = records_done + ${countOf(chunk)}, slices = slices + 1, updated_at = unixepoch()
      WHERE id = ${job.id} RETURNING ${countOf(chunk)} AS records`,
  ];
  if (job.kind === "record") {
    statements.push(sql`${media} UPDATE users SET
        upload_file_count = max(upload_file_count - (SELECT count(*) FROM m WHERE charged), 0),
        upload_total_bytes = max(upload_total_bytes - (SELECT coalesce(sum(size_bytes), 0) FROM m WHERE charged), 0)
      WHERE id = (SELECT owner_id FROM products WHERE id = ${job.record_id}) AND EXISTS (SELECT 1 FROM m WHERE charged)`);
  } else {
    statements.push(sql`DELETE FROM hidden_records WHERE job_id = ${job.id} AND record_id IN (${chunk})`);
  }
  statements.push(sql`DELETE FROM products WHERE id IN (${chunk})`);
  statements.push(...finishStatements(job, scope));
  const results = await batchRows<unknown[]>(svc.db, statements);
  const removed = { images: [] as string[], files: [] as string[] };
  for (const row of results[0] as { kind: "images" | "files"; storage_key: string }[]) removed[row.kind].push(row.storage_key);
  await queuePurge(svc, removed);
  const progress = (results[1] as { records: number }[])[0];
  return { records: progress?.records ?? 0, finished: (results[results.length - 1] as unknown[]).length > 0, gone: !progress };
}

/** One slice of an `anonymize` account deletion: `reown` of the account's records moved to the system account, then the end check. One batch. */
async function reownSlice(svc: DeletionServices, job: JobRow, reown: number): Promise<SliceResult> {
  const scope = scopeOf(job);
  const chunk = sql`SELECT p.id FROM products p WHERE ${scope} LIMIT ${reown}`;
  // Raw (the whole slice): composed from the job's scope over a bounded chunk (a LIMIT sub-select); the end is guarded by what is left.
  const results = await batchRows<unknown[]>(svc.db, [
    sql`UPDATE deletion_jobs SET records_done = records_done + ${countOf(chunk)}, slices = slices + 1, updated_at = unixepoch()
      WHERE id = ${job.id} RETURNING ${countOf(chunk)} AS records`,
    sql`UPDATE products SET owner_id = (SELECT id FROM users WHERE is_system = 1) WHERE id IN (${chunk})`,
    ...finishStatements(job, scope),
  ]);
  const progress = (results[0] as { records: number }[])[0];
  return { records: progress?.records ?? 0, finished: (results[results.length - 1] as unknown[]).length > 0, gone: !progress };
}

/**
 * The end of a job, when none of its records is left: an account's row goes (ON DELETE CASCADE
 * takes whatever still names it), then the job row (and its `hidden_records` rows). The last
 * statement returns a row exactly when the job ended.
 */
function finishStatements(job: JobRow, scope: SQL): SQL[] {
  // Raw: guarded deletes, decided by their own condition (no record of the job's scope left).
  const empty = sql`NOT EXISTS (SELECT 1 FROM products p WHERE ${scope})`;
  return [
    ...(job.kind === "account" ? [sql`DELETE FROM users WHERE id = ${job.user_id} AND is_system = 2 AND ${empty}`] : []),
    sql`DELETE FROM deletion_jobs WHERE id = ${job.id} AND ${empty} RETURNING id`,
  ];
}

/** Jobs whose last slice is older than this are queued again by the scheduled sweep: their messages were lost. */
export const STALLED_AFTER_SECONDS = 10 * 60;

/**
 * The scheduled sweep (the Cron Trigger): jobs that have not moved for `STALLED_AFTER_SECONDS`
 * (their message lost, or its retries spent on a failure that has passed) are claimed (their
 * `updated_at` moved to now, so a sweep queues each at most once per period) and queued again, at
 * most 100 a run.
 */
export async function requeueStalledDeletions(svc: Pick<Services, "db" | "bindings" | "log">, nowSeconds: number): Promise<number> {
  // Raw: a claim bounded by the statement itself (LIMIT sub-select); what it moved is what gets queued.
  const claimed = await svc.db.all<{ id: string }>(sql`UPDATE deletion_jobs SET updated_at = ${nowSeconds}
    WHERE id IN (SELECT id FROM deletion_jobs WHERE updated_at <= ${nowSeconds - STALLED_AFTER_SECONDS} ORDER BY updated_at LIMIT 100)
    RETURNING id`);
  for (const { id } of claimed) await queueDeletionJob(svc, id);
  if (claimed.length > 0) svc.log.warn("stalled deletion jobs queued again", { jobs: claimed.length });
  return claimed.length;
}
