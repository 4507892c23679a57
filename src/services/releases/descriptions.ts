import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { releases } from "../../db/schema";
import { licence } from "../../lib/release/licences";
import type { Credit, DescribedFile, ReleaseDescription } from "../../lib/release/publication";
import { fileUrl, releaseUrl } from "./metadata";

/**
 * Releases as their citations, metadata records, landing page and OAI-PMH records describe them
 * (src/lib/release/publication.ts), read from the database: the release row with its credits,
 * its files, its image files summed up and the release published before it, in ONE statement
 * (JSON subqueries), so a read of one release or of a page of them stays one round trip.
 */

/** The releases table as `r`, the alias `describeStatement` reads it under: its callers' conditions and order are written over it. */
export const describedRelease = alias(releases, "r");

/** What `describeStatement` returns per release; `toDescription` maps it. */
export interface DescriptionRow {
  version: string;
  title: string;
  description: string | null;
  licence: string;
  status: string;
  base_url: string;
  publisher: string;
  creator: string | null;
  creator_ror: string | null;
  subjects: string | null;
  snapshot_at: number | null;
  published_at: number | null;
  created_at: number;
  records: number | null;
  base_products: number | null;
  images: number | null;
  record_materials: number | null;
  doi: string | null;
  concept_doi: string | null;
  doi_status: string;
  credits: string;
  files: string;
  image_files: string;
  previous: string | null;
}

// Image files are the paths from `images/` up to (not including) `images0` ('0' follows '/'):
// an index range, so the other files are found without reading the image rows.
const NOT_IMAGES = sql.raw("(f.path < 'images/' OR f.path >= 'images0')");
const IMAGES = sql.raw("f.path >= 'images/' AND f.path < 'images0'");

/**
 * The rows of the releases `where` selects (a condition on `r`), ordered by `order`, at most
 * `limit`. The release published before each is by request time, as the list orders them.
 */
export function describeStatement(where: SQL, order: SQL = sql`r.version`, limit = 1): SQL {
  // Raw: correlated sub-selects aggregated to JSON (credits, files, image totals, the previous release), under the caller's condition.
  return sql`SELECT r.version, r.title, r.description, r.licence, r.status, r.base_url, r.publisher, r.creator, r.creator_ror,
      r.subjects, r.snapshot_at, r.published_at, r.created_at, r.records, r.base_products, r.images, r.record_materials,
      r.doi, r.concept_doi, r.doi_status,
      (SELECT json_group_array(json_array(c.username, c.orcid)) FROM
        (SELECT username, orcid FROM release_credits WHERE release_version = r.version ORDER BY position) c) AS credits,
      (SELECT json_group_array(json_array(f.path, f.bytes, f.sha256, f.media_type)) FROM
        (SELECT path, bytes, sha256, media_type FROM release_files f WHERE f.release_version = r.version AND ${NOT_IMAGES} ORDER BY path) f) AS files,
      -- Stamped at publication; summed here only for a release published before that (or one still building).
      CASE WHEN r.image_files IS NOT NULL THEN json_array(r.image_files, r.image_bytes)
        ELSE (SELECT json_array(count(*), coalesce(sum(f.bytes), 0)) FROM release_files f WHERE f.release_version = r.version AND ${IMAGES}) END
        AS image_files,
      (SELECT json_array(p.version, p.base_url, p.doi) FROM releases p
        WHERE p.status = 'published' AND (p.created_at < r.created_at OR (p.created_at = r.created_at AND p.version < r.version))
        ORDER BY p.created_at DESC, p.version DESC LIMIT 1) AS previous
    FROM releases r WHERE ${where} ORDER BY ${order} LIMIT ${limit}`;
}

/**
 * The description of a row; file URLs on `filesOrigin` (the request's, as the JSON read gives
 * them; the release's own origin for records sent elsewhere). Null for a release without a
 * snapshot (nothing to describe yet).
 */
export function toDescription(row: DescriptionRow, filesOrigin: string): ReleaseDescription | null {
  if (row.snapshot_at === null) return null;
  const credits = (JSON.parse(row.credits) as [string, string | null][]).map(([username, orcid]): Credit => ({ username, orcid }));
  const files = (JSON.parse(row.files) as [string, number, string, string][]).map(
    ([path, bytes, sha256, mediaType]): DescribedFile => ({ path, bytes, sha256, mediaType, url: fileUrl(filesOrigin, row.version, path) }),
  );
  const [imageCount, imageBytes] = JSON.parse(row.image_files) as [number, number];
  const previous = row.previous === null ? null : (JSON.parse(row.previous) as [string, string, string | null]);
  return {
    version: row.version,
    title: row.title,
    description: row.description,
    licence: licence(row.licence),
    publisher: row.publisher,
    creator: { name: row.creator ?? row.publisher, ror: row.creator_ror },
    url: releaseUrl(row.base_url, row.version),
    snapshotAt: row.snapshot_at,
    publishedAt: row.published_at,
    doi: row.doi,
    conceptDoi: row.concept_doi,
    counts: {
      records: row.records ?? 0,
      baseProducts: row.base_products ?? 0,
      images: row.images ?? 0,
      recordMaterials: row.record_materials ?? 0,
    },
    subjects: row.subjects === null ? [] : (JSON.parse(row.subjects) as string[]),
    credits,
    files,
    imageFiles: { count: imageCount, bytes: imageBytes },
    previous: previous === null ? null : { version: previous[0], url: releaseUrl(previous[1], previous[0]), doi: previous[2] },
    catalogue: { name: `${row.publisher} dataset releases`, url: `${row.base_url}/v1/releases` },
  };
}
