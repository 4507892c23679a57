import { and, eq, gt, sql } from "drizzle-orm";
import { costFields, QUERY_BUDGET } from "../../db/client";
import { columnsOf } from "../../db/rows";
import { releaseImages } from "../../db/schema";
import { checkValues, TableDataError } from "../../lib/release/columns";
import { CsvTableWriter } from "../../lib/release/csv-table-writer";
import { MultipartSink } from "../../lib/release/multipart-sink";
import { ParquetTableWriter } from "../../lib/release/parquet-table-writer";
import { ownerPseudonym, pseudonymKey } from "../../lib/release/pseudonym";
import { conceptDoi, versionDoi } from "../../lib/release/publication";
import { sha256Hex } from "../../lib/release/sha256-stream";
import {
  type BuildState,
  type ClaimedBuild,
  claimBuild,
  fenced,
  heartbeat,
  INITIAL_STATE,
  LeaseLost,
  markFailed,
  type ReleaseSliceServices,
  recordFailure,
  type StoredParquetState,
  saveState,
  type TableProgress,
  type WrittenFile,
} from "./build-state";
import { type ReleaseFacts, writeChecksums, writeCitationFile, writeDataPackage, writeReadme } from "./metadata";
import { clearStaging, snapshotUnit } from "./snapshot";
import { deletePrefix, RELEASE_MEDIA_TYPES, releaseKey, servedContentType, stagingKey } from "./storage";
import { type PageCursor, RELEASE_TABLES, type ReleaseTable, type RowContext } from "./tables";

/**
 * The build of a dataset release, run on the release queue as slices (docs/releases.md, The
 * build): the snapshot, then the steps below one after the other, each slice working until its
 * deadline and saving a checkpoint that the next slice (a new message) continues from. Every
 * write is fenced on the slice's lease (src/services/releases/build-state.ts).
 */

/** A build's job: the release and the attempt a message names. */
export interface ReleaseJob {
  readonly version: string;
  readonly buildId: string;
}

export type SliceOutcome =
  /** The deadline came: a checkpoint is saved and the lease given up; queue the next slice. */
  | { kind: "continue" }
  /** `registerDoi`: its DOI registration is pending (queue it). */
  | { kind: "published"; registerDoi: boolean }
  | { kind: "failed"; reason: string }
  /** Nothing to do: another attempt's message, or the build has ended, or the lease was lost. */
  | { kind: "stale" }
  /** Another invocation holds the lease: try again after this many seconds. */
  | { kind: "busy"; retryAfterSeconds: number }
  /** Something failed that may pass (storage, database): try again from the last checkpoint. */
  | { kind: "retry"; error: unknown };

/** A failure that trying again cannot mend (the data is wrong); the attempt ends `failed`. */
export class ReleaseBuildError extends Error {
  override name = "ReleaseBuildError";
}

/** Attempts that may fail in a row before the build is given up as `failed`. */
export const MAX_BUILD_FAILURES = 3;

/** How much longer than its slice a lease lasts: a slice that stops answering loses it after this. */
const LEASE_MARGIN_SECONDS = 120;
/** Progress is reported (and the lease renewed) at most this often while a table is written. */
const HEARTBEAT_MS = 2_000;
/** Image files copied per page of the staging table (one image in memory at a time). */
const IMAGE_PAGE = 50;

type Step =
  | { kind: "images" }
  | { kind: "table"; table: ReleaseTable }
  | { kind: "citation" }
  | { kind: "readme" }
  | { kind: "datapackage" }
  | { kind: "checksums" }
  | { kind: "publish" };

/** The steps after the snapshot, in order. The image files come first: a missing one fails the build before the long part. */
const STEPS: readonly Step[] = [
  { kind: "images" },
  ...RELEASE_TABLES.map((table) => ({ kind: "table" as const, table })),
  { kind: "citation" },
  { kind: "readme" },
  { kind: "datapackage" },
  { kind: "checksums" },
  { kind: "publish" },
];

/**
 * Empties the staging tables of a published attempt (the `release.cleanup` message its last slice
 * queues), 10,000 rows per table and round trip; only while that attempt is the release's and
 * published, so a late or duplicate message deletes nothing a build needs. Stops near the
 * invocation's query budget (false: the consumer queues the message again for the rest). Should
 * it fail for good, the next build's snapshot removes what is left.
 */
export async function clearPublishedStaging(
  svc: Pick<ReleaseSliceServices, "db" | "log" | "roundTrips">,
  job: ReleaseJob,
): Promise<boolean> {
  const started = Date.now();
  const done = await clearStaging(
    svc.db,
    job.version,
    sql`EXISTS (SELECT 1 FROM releases WHERE version = ${job.version} AND build_id = ${job.buildId} AND status = 'published')`,
    () => (svc.roundTrips?.statements ?? 0) >= QUERY_BUDGET,
  );
  svc.log.info(done ? "release staging rows removed" : "release staging rows partly removed", {
    release: job.version,
    ms: Date.now() - started,
    ...(svc.roundTrips ? costFields(svc.roundTrips) : {}),
  });
  return done;
}

/** Runs one slice of a build until `deadline` (epoch ms). Never throws: every outcome is a value. */
export async function runBuildSlice(svc: ReleaseSliceServices, job: ReleaseJob, options: { deadline: number }): Promise<SliceOutcome> {
  const leaseSeconds = Math.ceil(Math.max(0, options.deadline - Date.now()) / 1000) + LEASE_MARGIN_SECONDS;
  let claim;
  try {
    claim = await claimBuild(svc.db, job.version, job.buildId, leaseSeconds);
  } catch (error) {
    return { kind: "retry", error };
  }
  if (claim.kind !== "claimed") return claim;
  const slice = new BuildSlice(svc, claim.build, options.deadline);
  try {
    return await slice.run();
  } catch (error) {
    return slice.failed(error);
  }
}

class BuildSlice {
  private state: BuildState;
  private recordsWritten = 0;
  private readonly pseudonyms = new Map<number, string>();
  private readonly rowContext: RowContext;
  /** Uploads this slice opened, so that a failure can abort them. */
  private readonly open = new Set<MultipartSink>();
  private lastHeartbeat = Date.now();
  /** Milliseconds per step in this slice (by step name), for the slice's log line. */
  private readonly timings: Record<string, number> = {};

  constructor(
    private readonly svc: ReleaseSliceServices,
    private readonly build: ClaimedBuild,
    private readonly deadline: number,
  ) {
    this.state = build.state;
    const key = pseudonymKey(svc.config.pseudonymSecret);
    this.rowContext = {
      pseudonym: (ownerId) => {
        let pseudonym = this.pseudonyms.get(ownerId);
        if (pseudonym === undefined) {
          pseudonym = ownerPseudonym(key, ownerId);
          this.pseudonyms.set(ownerId, pseudonym);
        }
        return pseudonym;
      },
    };
  }

  private get fence() {
    return this.build.fence;
  }

  private get bucket(): R2Bucket {
    return this.svc.bindings.UPLOADS;
  }

  /** What this slice's invocation has cost D1 so far (its counter is the queue batch's), for its log line. */
  private cost(): Record<string, number> {
    return this.svc.roundTrips ? costFields(this.svc.roundTrips) : {};
  }

  /** The slice's deadline has passed, or it is near D1's limit of queries per invocation: it saves a checkpoint and ends. */
  private timeUp(): boolean {
    return Date.now() >= this.deadline || (this.svc.roundTrips?.statements ?? 0) >= QUERY_BUDGET;
  }

  async run(): Promise<SliceOutcome> {
    let counts = this.build.counts;
    let snapshotAt = this.build.snapshotAt;
    // Every slice moves the build on by at least one unit of work (the snapshot, a step, a page)
    // before it looks at the clock, so that even a slice that starts late makes progress.
    let worked = false;
    if (snapshotAt === null || counts === null) {
      // The snapshot, a bounded unit at a time (src/services/releases/snapshot.ts), each unit one
      // round trip that saves its own progress.
      for (;;) {
        const unitStarted = Date.now();
        const step = await snapshotUnit(this.svc, this.fence, {
          termsVersion: this.svc.config.contributorTermsVersion,
          initialState: JSON.stringify(INITIAL_STATE),
          // A fresh attempt: whatever an earlier one left under the release's keys goes first.
          beforeBegin: async () => {
            await deletePrefix(this.bucket, releaseKey(this.fence.version, ""));
            await deletePrefix(this.bucket, stagingKey(this.fence.version, ""));
          },
          stop: () => this.timeUp(),
        });
        worked = true;
        this.timings.snapshot = (this.timings.snapshot ?? 0) + Date.now() - unitStarted;
        if (!step) throw new LeaseLost(`the lease of release ${this.fence.version} was lost during its snapshot`);
        if (step.kind === "taken") {
          this.svc.log.info("release snapshot taken", { release: this.fence.version, ...step.counts });
          snapshotAt = step.counts.snapshotAt;
          counts = step.counts;
          this.state = INITIAL_STATE;
          break;
        }
        if (this.timeUp()) return this.pause();
      }
    }
    // The DOIs its files name: those the registration after publication will register, when DataCite is configured.
    const datacite = this.svc.config.datacite;
    const dois = datacite ? { doi: versionDoi(datacite.prefix, this.fence.version), conceptDoi: conceptDoi(datacite.prefix) } : null;
    const facts: ReleaseFacts = { ...this.build, version: this.fence.version, snapshotAt, dois };
    this.recordsWritten = this.state.step > 1 ? counts.records : (this.state.table?.rows ?? 0);

    while (this.state.step < STEPS.length) {
      if (worked && this.timeUp()) return this.pause();
      worked = true;
      const step = STEPS[this.state.step]!;
      const name = step.kind === "table" ? step.table.path : step.kind;
      const stepStarted = Date.now();
      const paused = () => {
        this.timings[name] = (this.timings[name] ?? 0) + Date.now() - stepStarted;
        return this.pause();
      };
      switch (step.kind) {
        case "images": {
          if (!(await this.copyImages())) return paused();
          break;
        }
        case "table": {
          const expected =
            step.table.name === "records" || step.table.name === "quality"
              ? counts.records
              : step.table.name === "record_materials"
                ? counts.recordMaterials
                : step.table.name === "images"
                  ? counts.images
                  : null;
          if (!(await this.writeTable(step.table, expected))) return paused();
          break;
        }
        case "citation":
          await this.advance([await writeCitationFile(this.svc.db, this.bucket, facts, counts)]);
          break;
        case "readme":
          await this.advance([await writeReadme(this.svc.db, this.bucket, facts)]);
          break;
        case "datapackage":
          await this.advance([await writeDataPackage(this.svc.db, this.bucket, facts)]);
          break;
        case "checksums":
          await this.advance([await writeChecksums(this.svc.db, this.bucket, this.fence.version)]);
          break;
        case "publish":
          await this.publish();
          this.timings.publish = Date.now() - stepStarted;
          this.svc.log.info("release published", {
            release: this.fence.version,
            records: this.recordsWritten,
            step_ms: this.timings,
            ...this.cost(),
          });
          return { kind: "published", registerDoi: this.svc.config.datacite !== null };
      }
      this.timings[name] = (this.timings[name] ?? 0) + Date.now() - stepStarted;
    }
    throw new Error("the build ran past its last step");
  }

  /** Saves the checkpoint, gives the lease up, and asks for the next slice. */
  private async pause(): Promise<SliceOutcome> {
    await saveState(this.svc.db, this.fence, this.state, { recordsWritten: this.recordsWritten, release: true });
    this.svc.log.info("release build slice ended", {
      release: this.fence.version,
      step: this.state.step,
      records_written: this.recordsWritten,
      step_ms: this.timings,
      ...this.cost(),
    });
    return { kind: "continue" };
  }

  /** Records finished files and moves to the next step, in one batch. */
  private async advance(files: readonly WrittenFile[]): Promise<void> {
    this.state = { step: this.state.step + 1, table: null, images: null };
    await saveState(this.svc.db, this.fence, this.state, { files, recordsWritten: this.recordsWritten });
  }

  /**
   * Copies the release's image files from the live `images/` objects to `releases/<v>/images/`,
   * checking each against the SHA-256 its key names and the size its rows give. A missing or
   * altered object fails the build: retrying could not bring it back. True when all are copied.
   */
  private async copyImages(): Promise<boolean> {
    const { version } = this.fence;
    let cursor = this.state.images?.cursor ?? "";
    let copied = this.state.images?.files ?? 0;
    for (;;) {
      // One row per file (GROUP BY file): a file shared by several records is copied once.
      const rows = await this.svc.db.all<{ file: string; storage_key: string; content_type: string; bytes: number }>(
        this.svc.db
          .select(columnsOf(releaseImages, ["file", "storage_key", "content_type", "bytes"]))
          .from(releaseImages)
          .where(and(eq(releaseImages.release_version, version), gt(releaseImages.file, cursor)))
          .groupBy(releaseImages.file)
          .orderBy(releaseImages.file)
          .limit(IMAGE_PAGE),
      );
      if (rows.length === 0) break;
      const written: WrittenFile[] = [];
      for (const row of rows) written.push(await this.copyImage(row));
      cursor = rows[rows.length - 1]!.file;
      copied += rows.length;
      this.state = { ...this.state, images: { cursor, files: copied } };
      await saveState(this.svc.db, this.fence, this.state, { files: written });
      if (rows.length < IMAGE_PAGE) break;
      if (this.timeUp()) return false;
    }
    await this.advance([]);
    return true;
  }

  private async copyImage(row: { file: string; storage_key: string; content_type: string; bytes: number }): Promise<WrittenFile> {
    const source = `images/${row.storage_key}`;
    const object = await this.bucket.get(source);
    if (!object) throw new ReleaseBuildError(`The image object ${source} is missing: restore it (or delete its image records) and retry.`);
    const bytes = new Uint8Array(await object.arrayBuffer());
    const sha256 = await sha256Hex(bytes);
    if (sha256 !== row.storage_key.slice(0, 64) || bytes.length !== row.bytes) {
      throw new ReleaseBuildError(`The image object ${source} does not hold the bytes its records name (SHA-256 or size differs).`);
    }
    await this.bucket.put(releaseKey(this.fence.version, row.file), bytes, {
      sha256,
      httpMetadata: { contentType: servedContentType(row.content_type) },
    });
    return { path: row.file, bytes: bytes.length, sha256, mediaType: row.content_type };
  }

  /**
   * Writes one table as CSV and Parquet in one pass over its staged rows, continuing from the
   * checkpoint when an earlier slice stopped inside it. True when both files are complete;
   * false when the deadline came first (the checkpoint is in `state`).
   */
  private async writeTable(table: ReleaseTable, expectedRows: number | null): Promise<boolean> {
    const files = await this.openTable(table, this.state.table);
    let { cursor, rows } = files;
    const isRecords = table.name === "records";
    let next = table.page(this.svc.db, this.fence.version, cursor, table.pageRows, this.rowContext);
    for (;;) {
      const page = await next;
      if (page.rows.length === 0) break;
      // The next page is read while this one is written.
      const last = page.rows.length < table.pageRows;
      next = last
        ? Promise.resolve({ rows: [], cursor: page.cursor })
        : table.page(this.svc.db, this.fence.version, page.cursor, table.pageRows, this.rowContext);
      // Checked once, written twice.
      const checked = checkValues(table.columns, page.rows, rows);
      await files.csv.writer.writeChecked(checked);
      await files.parquet.writer.writeChecked(checked);
      cursor = page.cursor;
      rows += page.rows.length;
      if (isRecords) this.recordsWritten = rows;
      if (last) break;
      if (this.timeUp()) {
        // Wait for the read in flight, so that no query of this slice outlives it.
        await next.catch(() => undefined);
        this.state = { ...this.state, table: await this.checkpointTable(table, files, cursor, rows) };
        return false;
      }
      if (Date.now() - this.lastHeartbeat >= HEARTBEAT_MS) {
        await heartbeat(this.svc.db, this.fence, this.recordsWritten);
        this.lastHeartbeat = Date.now();
      }
    }
    if (expectedRows !== null && rows !== expectedRows) {
      throw new ReleaseBuildError(`${table.name} holds ${rows} rows, the snapshot counted ${expectedRows}.`);
    }
    await files.csv.writer.finish();
    await files.parquet.writer.finish();
    const csv = await files.csv.sink.close();
    const parquet = await files.parquet.sink.close();
    this.open.delete(files.csv.sink);
    this.open.delete(files.parquet.sink);
    const footerKey = this.state.table?.parquet.writer.footer.key;
    await this.advance([
      { path: `${table.path}.csv`, bytes: csv.bytes, sha256: csv.sha256, mediaType: RELEASE_MEDIA_TYPES.csv },
      { path: `${table.path}.parquet`, bytes: parquet.bytes, sha256: parquet.sha256, mediaType: RELEASE_MEDIA_TYPES.parquet },
    ]);
    // After the step is saved: a slice that dies before it resumes from the checkpoint, footer
    // included. Best effort: the files are complete; a footer left behind is never served (it is
    // under release-staging/, which a new attempt at this version empties).
    if (footerKey) {
      await this.bucket.delete(footerKey).catch((error: unknown) => {
        this.svc.log.warn("a release checkpoint's Parquet footer could not be removed", {
          release: this.fence.version,
          key: footerKey,
          error,
        });
      });
    }
    return true;
  }

  private async openTable(table: ReleaseTable, saved: TableProgress | null) {
    const { version } = this.fence;
    const key = (extension: string) => ({
      key: releaseKey(version, `${table.path}.${extension}`),
      options: { checkpointKey: stagingKey(version, `${table.path}.${extension}.tail`) },
    });
    const csvFile = key("csv");
    const parquetFile = key("parquet");
    if (saved) {
      // A checkpoint that cannot be continued (its stored tail or footer gone or changed) throws:
      // the failure path starts the table again from its first row.
      const footer = await readFooter(this.bucket, saved.parquet.writer.footer);
      const csvSink = await MultipartSink.resume(this.bucket, saved.csv.sink);
      this.open.add(csvSink);
      const parquetSink = await MultipartSink.resume(this.bucket, saved.parquet.sink);
      this.open.add(parquetSink);
      return {
        cursor: saved.cursor,
        rows: saved.rows,
        csv: { sink: csvSink, writer: CsvTableWriter.resume(csvSink, table.columns, saved.csv.writer) },
        parquet: {
          sink: parquetSink,
          writer: ParquetTableWriter.resume(parquetSink, table.columns, { ...saved.parquet.writer, footer }),
        },
      };
    }
    const csvSink = MultipartSink.create(this.bucket, csvFile.key, {
      ...csvFile.options,
      contentType: servedContentType(RELEASE_MEDIA_TYPES.csv),
    });
    const parquetSink = MultipartSink.create(this.bucket, parquetFile.key, {
      ...parquetFile.options,
      contentType: RELEASE_MEDIA_TYPES.parquet,
    });
    this.open.add(csvSink);
    this.open.add(parquetSink);
    return {
      cursor: null as PageCursor,
      rows: 0,
      csv: { sink: csvSink, writer: CsvTableWriter.create(csvSink, table.columns) },
      parquet: { sink: parquetSink, writer: ParquetTableWriter.create(parquetSink, table.columns) },
    };
  }

  private async checkpointTable(
    table: ReleaseTable,
    files: Awaited<ReturnType<BuildSlice["openTable"]>>,
    cursor: PageCursor,
    rows: number,
  ): Promise<TableProgress> {
    const { footer, ...parquetWriter } = await files.parquet.writer.checkpoint();
    const stored = await storeFooter(this.bucket, stagingKey(this.fence.version, `${table.path}.parquet.footer`), footer);
    return {
      cursor,
      rows,
      csv: { sink: await files.csv.sink.checkpoint(), writer: files.csv.writer.state() },
      parquet: { sink: await files.parquet.sink.checkpoint(), writer: { ...parquetWriter, footer: stored } },
    };
  }

  /**
   * Publishes the release: one fenced statement. Its staging rows are emptied afterwards by a
   * message of their own (`clearPublishedStaging`), which the consumer sends: that housekeeping
   * is no part of the build, and the slice ends the moment the release is published.
   */
  private async publish(): Promise<void> {
    // Its DOI is registered afterwards, by a message of its own (src/services/releases/doi.ts).
    const doiStatus = this.svc.config.datacite ? "pending" : "disabled";
    // Raw: fenced on the lease (compare-and-set), with the image totals as sub-selects of the same statement.
    const updated =
      await this.svc.db.all(sql`UPDATE releases SET status = 'published', published_at = unixepoch(), records_written = records,
        build_state = NULL, lease_id = NULL, lease_until = NULL, build_failures = 0, updated_at = unixepoch(),
        doi_status = ${doiStatus}, doi_attempts = 0, doi_error = NULL, doi_updated_at = unixepoch(),
        image_files = (SELECT count(*) FROM release_files WHERE release_version = ${this.fence.version} AND path >= 'images/' AND path < 'images0'),
        image_bytes = (SELECT coalesce(sum(bytes), 0) FROM release_files
          WHERE release_version = ${this.fence.version} AND path >= 'images/' AND path < 'images0')
      WHERE ${fenced(this.fence)} RETURNING version`);
    if (updated.length === 0) throw new LeaseLost(`the lease of release ${this.fence.version} was lost before it was published`);
  }

  /**
   * After a throw: a lost lease ends the slice quietly (another one owns the build); a
   * ReleaseBuildError or a row that does not fit its table ends the attempt `failed`; anything
   * else counts as a failed attempt that the queue retries from the last checkpoint, restarting a
   * half-written table, until MAX_BUILD_FAILURES in a row.
   */
  async failed(error: unknown): Promise<SliceOutcome> {
    const log = this.svc.log;
    if (error instanceof LeaseLost) {
      log.warn("release build slice lost its lease", { release: this.fence.version });
      return { kind: "stale" };
    }
    const permanent = error instanceof ReleaseBuildError || error instanceof TableDataError;
    const reason = permanent ? (error as Error).message : `The build failed ${MAX_BUILD_FAILURES} times in a row; last: ${describe(error)}`;
    try {
      if (permanent || this.build.buildFailures + 1 >= MAX_BUILD_FAILURES) {
        if (await markFailed(this.svc.db, this.fence, reason)) {
          log.error("release build failed", { release: this.fence.version, reason, error });
          await this.discardUploads();
          const { version, buildId } = this.fence;
          await clearStaging(
            this.svc.db,
            version,
            sql`EXISTS (SELECT 1 FROM releases WHERE version = ${version} AND build_id = ${buildId} AND status = 'failed')`,
            // What is left past the invocation's query budget, the next snapshot removes.
            () => (this.svc.roundTrips?.statements ?? 0) >= QUERY_BUDGET,
          ).catch((cleanup: unknown) =>
            log.warn("release staging rows could not be removed; the next snapshot removes them", { release: version, error: cleanup }),
          );
          return { kind: "failed", reason };
        }
        return { kind: "stale" };
      }
      const restart: BuildState = { ...this.state, table: null };
      const failures = await recordFailure(this.svc.db, this.fence, restart, this.state.step > 1 ? this.recordsWritten : 0);
      if (failures === null) return { kind: "stale" };
      log.warn("release build slice failed; it will be retried", { release: this.fence.version, failures, error });
      await this.discardUploads();
      return { kind: "retry", error };
    } catch (second) {
      // The database itself failed: the lease runs out and the queue's retry takes over.
      log.error("release build slice failed and could not record it", { release: this.fence.version, error, second });
      return { kind: "retry", error };
    }
  }

  /** Aborts the uploads of the unfinished table (best effort; R2 drops what is left after 7 days). */
  private async discardUploads(): Promise<void> {
    const saved = this.state.table;
    const settle = (work: Promise<unknown>) => work.catch(() => undefined);
    for (const sink of this.open) await settle(sink.abort());
    if (saved) {
      await settle(MultipartSink.discard(this.bucket, saved.csv.sink));
      await settle(MultipartSink.discard(this.bucket, saved.parquet.sink));
      await settle(this.bucket.delete(saved.parquet.writer.footer.key));
    }
  }
}

/** Stores a Parquet checkpoint's footer metadata in R2 (one put, which R2 checks against the SHA-256). */
async function storeFooter(bucket: R2Bucket, key: string, footer: string): Promise<StoredParquetState["footer"]> {
  const bytes = new TextEncoder().encode(footer);
  const sha256 = await sha256Hex(bytes);
  await bucket.put(key, bytes, { sha256 });
  return { key, bytes: bytes.length, sha256 };
}

/** Reads a footer `storeFooter` stored; throws when it is gone or not the bytes the checkpoint names. */
async function readFooter(bucket: R2Bucket, stored: StoredParquetState["footer"]): Promise<string> {
  const object = await bucket.get(stored.key);
  const bytes = object === null ? null : new Uint8Array(await object.arrayBuffer());
  if (bytes === null || bytes.length !== stored.bytes || (await sha256Hex(bytes)) !== stored.sha256) {
    throw new Error(`the Parquet footer checkpoint ${stored.key} is missing or changed since it was saved`);
  }
  return new TextDecoder().decode(bytes);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 500) : String(error).slice(0, 500);
}
