import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { checkColumn, QUALITY_CHECK_CODES } from "../../lib/record-quality";
import { dataPackageJson, type FileFacts, type ResourceInput, tableResources } from "../../lib/release/datapackage";
import { licence } from "../../lib/release/licences";
import { MultipartSink } from "../../lib/release/multipart-sink";
import { type ReadmeInput, releaseReadme } from "../../lib/release/readme";
import { sha256sums } from "../../lib/release/sha256sums";
import type { WrittenFile } from "./build-state";
import { putFile, RELEASE_MEDIA_TYPES, releaseKey, stagingKey } from "./storage";
import { RELEASE_TABLES } from "./tables";

/** Who a release's citation names as its author. */
export const RELEASE_PUBLISHER = "relab";

export const README_PATH = "README.md";
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
}

/** The release's own URL: what its citation and datapackage.json name. */
export const releaseUrl = (baseUrl: string, version: string): string => `${baseUrl}/v1/releases/${version}`;

/** The suggested citation of a release, in the common data-set style (README.md adds BibTeX). */
export function citation(title: string, version: string, snapshotAt: number, url: string): string {
  return `${RELEASE_PUBLISHER} (${new Date(snapshotAt * 1000).getUTCFullYear()}). ${title} (Version ${version}) [Data set]. ${url}`;
}

/** The URL a file of the release is served at. */
export const fileUrl = (baseUrl: string, version: string, path: string): string => `${releaseUrl(baseUrl, version)}/files/${path}`;

interface FileRow {
  path: string;
  bytes: number;
  sha256: string;
}

/** The files written so far, except the image files (the images table lists those). */
async function tableFiles(db: Db, version: string): Promise<Map<string, FileRow>> {
  const rows = await db.all<FileRow>(sql`SELECT path, bytes, sha256 FROM release_files
    WHERE release_version = ${version} AND substr(path, 1, 7) <> 'images/' ORDER BY path`);
  return new Map(rows.map((row) => [row.path, row]));
}

function facts(files: Map<string, FileRow>, path: string): FileFacts {
  const file = files.get(path);
  if (!file) throw new Error(`${path} has not been written`);
  return file;
}

/** README.md: what the release is, how to cite it, its licence and tables, how to open them. */
export async function writeReadme(db: Db, bucket: R2Bucket, release: ReleaseFacts): Promise<WrittenFile> {
  const files = await tableFiles(db, release.version);
  const [images] = await db.all<{
    files: number;
    bytes: number | null;
  }>(sql`SELECT count(*) AS files, sum(bytes) AS bytes FROM release_files
    WHERE release_version = ${release.version} AND substr(path, 1, 7) = 'images/'`);
  const quality = await qualitySummary(db, release.version);
  const url = releaseUrl(release.baseUrl, release.version);
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
    publisher: RELEASE_PUBLISHER,
    snapshotAt: new Date(release.snapshotAt * 1000),
    url,
    filesUrl: `${url}/files/`,
    licence: licence(release.licence),
    files: listed,
    quality,
  });
  return putFile(bucket, release.version, README_PATH, text, RELEASE_MEDIA_TYPES.markdown);
}

/** Per quality check, how many staged records pass, fail or are not checked: the README's summary of the quality table. */
async function qualitySummary(db: Db, version: string): Promise<NonNullable<ReadmeInput["quality"]>> {
  const sums = QUALITY_CHECK_CODES.flatMap((code) => [
    `coalesce(sum(${checkColumn(code)} = 1), 0) AS ${code}_pass`,
    `coalesce(sum(${checkColumn(code)} = 0), 0) AS ${code}_fail`,
  ]);
  const [row] = await db.all<Record<string, number>>(
    sql`SELECT count(*) AS records, ${sql.raw(sums.join(", "))} FROM release_records WHERE release_version = ${version}`,
  );
  const records = row?.records ?? 0;
  return {
    records,
    checks: QUALITY_CHECK_CODES.map((code) => {
      const pass = row?.[`${code}_pass`] ?? 0;
      const fail = row?.[`${code}_fail`] ?? 0;
      return { code, pass, fail, notApplicable: records - pass - fail };
    }),
  };
}

/** datapackage.json: every table in both formats, with their schemas, keys, sizes and hashes. */
export async function writeDataPackage(db: Db, bucket: R2Bucket, release: ReleaseFacts): Promise<WrittenFile> {
  const files = await tableFiles(db, release.version);
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
  const text = dataPackageJson({
    name: RELEASE_PUBLISHER,
    version: release.version,
    title: release.title,
    ...(release.description ? { description: release.description } : {}),
    created: new Date(release.snapshotAt * 1000),
    url: releaseUrl(release.baseUrl, release.version),
    licences: [licence(release.licence)],
    keywords: ["circular economy", "product disassembly", "bill of materials", "materials"],
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
    const rows = await db.all<{ path: string; sha256: string }>(sql`SELECT path, sha256 FROM release_files
      WHERE release_version = ${version} AND path > ${after} AND path <> ${CHECKSUMS_PATH} ORDER BY path LIMIT 1000`);
    if (rows.length === 0) break;
    // Each page is in path order and follows the previous one, so the file is sorted as a whole.
    await sink.write(encoder.encode(sha256sums(rows)));
    after = rows[rows.length - 1]!.path;
  }
  const stored = await sink.close();
  return { path: CHECKSUMS_PATH, bytes: stored.bytes, sha256: stored.sha256, mediaType: RELEASE_MEDIA_TYPES.checksums };
}
