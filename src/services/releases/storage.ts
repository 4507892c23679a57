import { toHex } from "../../lib/encoding";
import { MEDIA_TYPES } from "../../lib/release/datapackage";
import type { WrittenFile } from "./build-state";

/**
 * Where a release lives in R2 (`UPLOADS`):
 * - `releases/<version>/<path>`: its files, written once by the build and never again after
 *   publication. Nothing else in the service writes or deletes under `releases/` (the media purge
 *   names `images/` and `files/` keys only).
 * - `release-staging/<version>/`: the build's checkpoints (the bytes of a file not yet in an
 *   upload part, a Parquet file's footer metadata so far), deleted as each file completes. Never
 *   served.
 */
export const releaseKey = (version: string, path: string): string => `releases/${version}/${path}`;
export const stagingKey = (version: string, path: string): string => `release-staging/${version}/${path}`;

/** Media types of a release's files as `release_files` and datapackage.json give them. */
export const RELEASE_MEDIA_TYPES = {
  csv: MEDIA_TYPES.csv,
  parquet: MEDIA_TYPES.parquet,
  json: MEDIA_TYPES.json,
  markdown: MEDIA_TYPES.markdown,
  checksums: "text/plain",
  /** CITATION.cff is YAML (RFC 9512). */
  cff: "application/yaml",
} as const;

/** The `Content-Type` a file is served with: text gets its charset (every text file is UTF-8). */
export function servedContentType(mediaType: string): string {
  if (mediaType === MEDIA_TYPES.csv) return "text/csv; charset=utf-8; header=present";
  return mediaType.startsWith("text/") ? `${mediaType}; charset=utf-8` : mediaType;
}

/** Writes a small file in one put, which R2 checks against the SHA-256 computed here. */
export async function putFile(
  bucket: R2Bucket,
  version: string,
  path: string,
  body: Uint8Array | string,
  mediaType: string,
): Promise<WrittenFile> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const sha256 = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
  await bucket.put(releaseKey(version, path), bytes, { sha256, httpMetadata: { contentType: servedContentType(mediaType) } });
  return { path, bytes: bytes.length, sha256, mediaType };
}

/** Deletes every object under `prefix` (an unpublished release's leftovers), a listing page at a time. */
export async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const listing = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
    const keys = listing.objects.map((object) => object.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
    cursor = listing.truncated ? listing.cursor : undefined;
  } while (cursor);
  return deleted;
}
