import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../lib/time";
import { citation, fileUrl, releaseUrl } from "../../services/releases/metadata";
import type { Release, ReleaseFile } from "../../services/releases/releases";
import type { ReleaseSchema, ReleaseSummarySchema } from "./releases.schemas";

const iso = (seconds: number | null) => (seconds === null ? null : isoSeconds(seconds * 1000));

/**
 * A release as the list shows it. Its `url` and citation name the origin it was built for (the
 * one its README and datapackage.json name); file URLs the origin the request came to.
 */
export function toReleaseSummary(release: Release): z.infer<typeof ReleaseSummarySchema> {
  const url = releaseUrl(release.baseUrl, release.version);
  return {
    version: release.version,
    title: release.title,
    description: release.description,
    licence: release.licence,
    status: release.status,
    url,
    citation: release.snapshotAt === null ? null : citation(release.title, release.version, release.snapshotAt, url),
    snapshot_at: iso(release.snapshotAt),
    created_at: isoSeconds(release.createdAt * 1000),
    published_at: iso(release.publishedAt),
    counts: {
      records: release.counts?.records ?? null,
      base_products: release.counts?.baseProducts ?? null,
      images: release.counts?.images ?? null,
      record_materials: release.counts?.recordMaterials ?? null,
    },
    progress: { records_written: release.recordsWritten },
    failure_reason: release.failureReason,
  };
}

/** A release with its files. */
export function toRelease(release: Release, files: readonly ReleaseFile[], origin: string): z.infer<typeof ReleaseSchema> {
  return {
    ...toReleaseSummary(release),
    files: files.map((file) => ({
      path: file.path,
      bytes: file.bytes,
      sha256: file.sha256,
      media_type: file.mediaType,
      url: fileUrl(origin, release.version, file.path),
    })),
  };
}
