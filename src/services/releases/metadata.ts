import { and, count, eq, gt, ne, sql, sum } from "drizzle-orm";
import { batchRows, type Db } from "../../db/client";
import { columnsOf } from "../../db/rows";
import { releaseCredits, releaseFiles, releases } from "../../db/schema";
import { checkColumn, QUALITY_CHECK_CODES } from "../../lib/record-quality";
import { citationCff } from "../../lib/release/citation-cff";
import { dataPackageJson, type FileFacts, type ResourceInput, tableResources } from "../../lib/release/datapackage";
import { licence } from "../../lib/release/licences";
import { MultipartSink } from "../../lib/release/multipart-sink";
import { type Credit, RELEASE_KEYWORDS, type ReleaseDescription } from "../../lib/release/publication";
import { type ReadmeInput, releaseReadme } from "../../lib/release/readme";
import { sha256sums } from "../../lib/release/sha256sums";
import type { WrittenFile } from "./build-state";
import { putFile, RELEASE_MEDIA_TYPES, releaseKey, stagingKey } from "./storage";
import { RELEASE_TABLES } from "./tables";

/** The Data Package's name: stable across releases and publishers (the version tells releases apart). */
export const PACKAGE_NAME = "relab";

export const README_PATH = "README.md";
export const CITATION_PATH = "CITATION.cff";
export const DATAPACKAGE_PATH = "datapackage.json";
export const CHECKSUMS_PATH = "SHA256SUMS";

/** The release as its metadata files describe it. */
export interface ReleaseFacts {
  readonly version: string;
  readonly title: string;
  readonly description: string | null;
  readonly licence: string;
  /** The API's origin (`https://api.example.org`). */
  readonly baseUrl: string;
  /** Unix seconds. */
  readonly snapshotAt: number;
  readonly publisher: string;
  /** Null: the publisher. */
  readonly creator: string | null;
  readonly creatorRor: string | null;
  /**
   * The DOIs the release is registered under once published (DataCite configured when its files
   * were written), which its README and CITATION.cff name; null: it gets none.
   */
  readonly dois: { readonly doi: string; readonly conceptDoi: string } | null;
}

/** The release's own URL: what its citation and datapackage.json name. */
export const releaseUrl = (baseUrl: string, version: string): string => `${baseUrl}/v1/releases/${version}`;

/** The URL a file of the release is served at. */
export const fileUrl = (baseUrl: string, version: string, path: string): string => `${releaseUrl(baseUrl, version)}/files/${path}`;

interface FileRow {
  path: string;
  bytes: number;
  sha256: string;
}

/** The files written so far, except the image files (the images table lists those). */
async function tableFiles(db: Db, version: string): Promise<Map<string, FileRow>> {
  const rows = await db.all<FileRow>(
    db
      .select(columnsOf(releaseFiles, ["path", "bytes", "sha256"]))
      .from(releaseFiles)
      .where(and(eq(releaseFiles.release_version, version), ne(sql`substr(${releaseFiles.path}, 1, 7)`, "images/")))
      .orderBy(releaseFiles.path),
  );
  return new Map(rows.map((row) => [row.path, row]));
}

function facts(files: Map<string, FileRow>, path: string): FileFacts {
  const file = files.get(path);
  if (!file) throw new Error(`${path} has not been written`);
  return file;
}

/** The contributors the snapshot credits and the release's subjects (product types), as the snapshot stamped them. */
async function creditsAndSubjects(db: Db, version: string): Promise<{ credits: Credit[]; subjects: string[] }> {
  const [credits, release] = await batchRows<[Credit, { subjects: string | null }]>(db, [
    db
      .select(columnsOf(releaseCredits, ["username", "orcid"]))
      .from(releaseCredits)
      .where(eq(releaseCredits.release_version, version))
      .orderBy(releaseCredits.position),
    db.select({ subjects: releases.subjects }).from(releases).where(eq(releases.version, version)),
  ]);
  return { credits, subjects: release[0]?.subjects ? (JSON.parse(release[0].subjects) as string[]) : [] };
}

/**
 * The release as CITATION.cff describes it, written before publication: no publication date, no
 * files (the file lists are datapackage.json's and SHA256SUMS'), the DOIs it will be registered under.
 */
async function describedForFiles(db: Db, release: ReleaseFacts, counts: ReleaseDescription["counts"]): Promise<ReleaseDescription> {
  const { credits, subjects } = await creditsAndSubjects(db, release.version);
  return {
    version: release.version,
    title: release.title,
    description: release.description,
    licence: licence(release.licence),
    publisher: release.publisher,
    creator: { name: release.creator ?? release.publisher, ror: release.creatorRor },
    url: releaseUrl(release.baseUrl, release.version),
    snapshotAt: release.snapshotAt,
    publishedAt: null,
    doi: release.dois?.doi ?? null,
    conceptDoi: release.dois?.conceptDoi ?? null,
    counts,
    subjects,
    credits,
    files: [],
    imageFiles: { count: 0, bytes: 0 },
    previous: null,
    catalogue: { name: `${release.publisher} dataset releases`, url: `${release.baseUrl}/v1/releases` },
  };
}

/** CITATION.cff (Citation File Format 1.2.0): how to cite the release, its creator, credited contributors and DOIs. */
export async function writeCitationFile(
  db: Db,
  bucket: R2Bucket,
  release: ReleaseFacts,
  counts: ReleaseDescription["counts"],
): Promise<WrittenFile> {
  const text = citationCff(await describedForFiles(db, release, counts));
  return putFile(bucket, release.version, CITATION_PATH, text, RELEASE_MEDIA_TYPES.cff);
}

/** README.md: what the release is, how to cite it, its licence and tables, how to open them. */
export async function writeReadme(db: Db, bucket: R2Bucket, release: ReleaseFacts): Promise<WrittenFile> {
  const files = await tableFiles(db, release.version);
  const [images] = await db.all<{
    files: number;
    bytes: number | null;
  }>(
    db
      .select({ files: count().as("files"), bytes: sum(releaseFiles.bytes).as("bytes") })
      .from(releaseFiles)
      .where(and(eq(releaseFiles.release_version, release.version), eq(sql`substr(${releaseFiles.path}, 1, 7)`, "images/"))),
  );
  const quality = await qualitySummary(db, release.version);
  const url = releaseUrl(release.baseUrl, release.version);
  const { credits } = await creditsAndSubjects(db, release.version);
  const listed = RELEASE_TABLES.flatMap((table) =>
    ["csv", "parquet"].map((extension) => ({ ...facts(files, `${table.path}.${extension}`), description: table.title })),
  );
  if (images && images.files > 0) {
    listed.push({
      path: "images/",
      sha256: "",
      bytes: images.bytes ?? 0,
      description: `${images.files} image files, listed in images.csv`,
    });
  }
  const text = releaseReadme({
    title: release.title,
    version: release.version,
    ...(release.description ? { description: release.description } : {}),
    publisher: release.publisher,
    creator: release.creator ?? release.publisher,
    snapshotAt: new Date(release.snapshotAt * 1000),
    url,
    filesUrl: `${url}/files/`,
    licence: licence(release.licence),
    files: listed,
    doi: release.dois?.doi ?? null,
    conceptDoi: release.dois?.conceptDoi ?? null,
    credits,
    quality,
  });
  return putFile(bucket, release.version, README_PATH, text, RELEASE_MEDIA_TYPES.markdown);
}

/**
 * Records summed per statement for the README's quality summary. One statement over every staged
 * record held D1 for 7.8 s at 300,000 base products (4.5 million records), growing with the
 * dataset toward the 30 s limit; chunks of this many records in primary-key order took 549 ms at
 * most there, and other queries run between them.
 */
const QUALITY_SUMMARY_CHUNK = 250_000;

/** Per quality check, how many staged records pass, fail or are not checked: the README's summary of the quality table. */
export async function qualitySummary(db: Db, version: string, chunk = QUALITY_SUMMARY_CHUNK): Promise<NonNullable<ReadmeInput["quality"]>> {
  const sums = QUALITY_CHECK_CODES.flatMap((code) => [
    `coalesce(sum(${checkColumn(code)} = 1), 0) AS ${code}_pass`,
    `coalesce(sum(${checkColumn(code)} = 0), 0) AS ${code}_fail`,
  ]);
  const columns = QUALITY_CHECK_CODES.map((code) => checkColumn(code)).join(", ");
  const totals: Record<string, number> = {};
  let records = 0;
  for (let after = 0; ; ) {
    const [row] = await db.all<Record<string, number> & { records: number; last: number | null }>(
      // Raw: the sums are composed from the list of quality checks, two columns per check, over one chunk in key order.
      sql`SELECT count(*) AS records, max(id) AS last, ${sql.raw(sums.join(", "))} FROM (
        SELECT id, ${sql.raw(columns)} FROM release_records WHERE release_version = ${version} AND id > ${after}
        ORDER BY id LIMIT ${chunk})`,
    );
    if (!row || row.records === 0 || row.last === null) break;
    records += row.records;
    for (const code of QUALITY_CHECK_CODES) {
      for (const outcome of ["pass", "fail"])
        totals[`${code}_${outcome}`] = (totals[`${code}_${outcome}`] ?? 0) + (row[`${code}_${outcome}`] ?? 0);
    }
    if (row.records < chunk) break;
    after = row.last;
  }
  return {
    records,
    checks: QUALITY_CHECK_CODES.map((code) => {
      const pass = totals[`${code}_pass`] ?? 0;
      const fail = totals[`${code}_fail`] ?? 0;
      return { code, pass, fail, notApplicable: records - pass - fail };
    }),
  };
}

/** datapackage.json: every table in both formats, with their schemas, keys, sizes and hashes; CITATION.cff; who made it. */
export async function writeDataPackage(db: Db, bucket: R2Bucket, release: ReleaseFacts): Promise<WrittenFile> {
  const files = await tableFiles(db, release.version);
  const { credits } = await creditsAndSubjects(db, release.version);
  const resources: ResourceInput[] = RELEASE_TABLES.flatMap((table) =>
    tableResources(
      {
        name: table.name,
        title: table.title,
        description: table.description,
        schema: { columns: table.columns, primaryKey: table.primaryKey, ...(table.foreignKeys ? { foreignKeys: table.foreignKeys } : {}) },
      },
      { ...facts(files, `${table.path}.csv`), path: `${table.path}.csv` },
      { ...facts(files, `${table.path}.parquet`), path: `${table.path}.parquet` },
    ),
  );
  // A release built before CITATION.cff existed has none (and is never rebuilt); every new one does.
  if (files.has(CITATION_PATH)) {
    resources.push({
      ...facts(files, CITATION_PATH),
      name: "citation",
      format: "cff",
      mediatype: RELEASE_MEDIA_TYPES.cff,
      encoding: "utf-8",
      title: "How to cite this release (Citation File Format 1.2.0)",
    });
  }
  const text = dataPackageJson({
    name: PACKAGE_NAME,
    version: release.version,
    title: release.title,
    ...(release.description ? { description: release.description } : {}),
    created: new Date(release.snapshotAt * 1000),
    url: releaseUrl(release.baseUrl, release.version),
    licences: [licence(release.licence)],
    keywords: [...RELEASE_KEYWORDS],
    contributors: [
      { title: release.creator ?? release.publisher, roles: ["creator"] },
      { title: release.publisher, roles: ["publisher"] },
      ...credits.map((credit) => ({
        title: credit.username,
        ...(credit.orcid ? { path: `https://orcid.org/${credit.orcid}` } : {}),
        roles: ["dataCollector"],
      })),
    ],
    resources,
  });
  return putFile(bucket, release.version, DATAPACKAGE_PATH, text, RELEASE_MEDIA_TYPES.json);
}

/**
 * SHA256SUMS over every file written before it (images included), read from `release_files` a page
 * at a time in path order and streamed to R2, so that its size does not depend on memory.
 */
export async function writeChecksums(db: Db, bucket: R2Bucket, version: string): Promise<WrittenFile> {
  const sink = MultipartSink.create(bucket, releaseKey(version, CHECKSUMS_PATH), {
    contentType: "text/plain; charset=utf-8",
    checkpointKey: stagingKey(version, `${CHECKSUMS_PATH}.tail`),
  });
  const encoder = new TextEncoder();
  let after = "";
  for (;;) {
    const rows = await db.all<{ path: string; sha256: string }>(
      db
        .select(columnsOf(releaseFiles, ["path", "sha256"]))
        .from(releaseFiles)
        .where(and(eq(releaseFiles.release_version, version), gt(releaseFiles.path, after), ne(releaseFiles.path, CHECKSUMS_PATH)))
        .orderBy(releaseFiles.path)
        .limit(1000),
    );
    if (rows.length === 0) break;
    // Each page is in path order and follows the previous one, so the file is sorted as a whole.
    await sink.write(encoder.encode(sha256sums(rows)));
    after = rows[rows.length - 1]!.path;
  }
  const stored = await sink.close();
  return { path: CHECKSUMS_PATH, bytes: stored.bytes, sha256: stored.sha256, mediaType: RELEASE_MEDIA_TYPES.checksums };
}
