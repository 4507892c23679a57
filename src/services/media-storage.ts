import { sql } from "drizzle-orm";
import type { Services } from "../container";
import { THUMBNAIL_WIDTHS, thumbnailKey } from "./media-records";

/**
 * Where uploads live in R2 (`UPLOADS`):
 * - `quarantine/<kind>/<id>`: the bytes of an upload while it is `pending`; never served.
 * - `images/<sha256>.<ext>`, `files/<sha256>.<ext>`: content-addressed, served at
 *   `/uploads/<kind>/<key>`; rows with equal bytes share one object.
 * - `images/thumbnails/<width>/<key>`: an image's thumbnails, served under `/uploads/images/`.
 */

export type MediaKind = "images" | "files";

/** Served objects never change under their key, so clients and the edge may keep them for a year. */
export const IMMUTABLE_CACHE = "public, max-age=31536000, immutable";

/** R2 key of an upload's bytes while it waits for the scan. */
export const quarantineKey = (kind: MediaKind, id: string): string => `quarantine/${kind}/${id}`;

/** R2 key of a served object: `<kind>/<path>`, where `path` is what follows `/uploads/<kind>/`. */
export const servedKey = (kind: MediaKind, path: string): string => `${kind}/${path}`;

/** Hex SHA-256 of the bytes: the content address. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Every R2 key belonging to the object of `storageKey`: the object and, for images, its thumbnails. */
export function objectKeys(kind: MediaKind, storageKey: string): string[] {
  const keys = [servedKey(kind, storageKey)];
  if (kind === "images") keys.push(...THUMBNAIL_WIDTHS.map((width) => servedKey(kind, thumbnailKey(storageKey, width))));
  return keys;
}

/**
 * Deletes the objects of the storage keys no row needs any more (rows share objects with equal
 * bytes). Run after the rows are gone or rejected; a key still named by a pending or clean row is
 * kept (a rejected row never needs its object).
 */
export async function deleteUnreferencedObjects(svc: Pick<Services, "db" | "bindings">, kind: MediaKind, storageKeys: readonly string[]): Promise<number> {
  const unique = [...new Set(storageKeys)];
  if (unique.length === 0) return 0;
  const table = sql.raw(kind);
  const referenced = new Set<string>();
  // D1 binds at most 100 parameters per statement.
  for (let i = 0; i < unique.length; i += 90) {
    const chunk = unique.slice(i, i + 90);
    const rows = await svc.db.all<{ storage_key: string }>(
      sql`SELECT DISTINCT storage_key FROM ${table}
          WHERE storage_key IN (${sql.join(chunk.map((key) => sql`${key}`), sql`, `)}) AND status <> 'rejected'`,
    );
    for (const row of rows) referenced.add(row.storage_key);
  }
  const orphans = unique.filter((key) => !referenced.has(key)).flatMap((key) => objectKeys(kind, key));
  for (let i = 0; i < orphans.length; i += 1000) await svc.bindings.UPLOADS.delete(orphans.slice(i, i + 1000));
  return orphans.length;
}
