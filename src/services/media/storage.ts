import { and, inArray, ne } from "drizzle-orm";
import type { Services } from "../../container";
import { files, images } from "../../db/schema";
import { THUMBNAIL_WIDTHS, thumbnailKey } from "./records";

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

/** Hex SHA-256 of the bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The content address of an upload, fixed in its request (its URL is final from the 201 on): the
 * hex SHA-256 of the served bytes when they are the bytes stored in quarantine (`orientation`
 * 1, every research file), so equal bytes share one object. An image whose EXIF orientation the
 * media job still has to apply is served as a deterministic function of its sanitised bytes and
 * that orientation: its address is the SHA-256 of `orientation <n>\n` followed by those bytes,
 * so equal keys still mean equal served bytes, and an upright upload never shares an address
 * with one still to turn (docs/storage.md, "Orientation").
 */
export async function contentHash(bytes: Uint8Array, orientation: number): Promise<string> {
  if (orientation === 1) return sha256Hex(bytes);
  const prefix = new TextEncoder().encode(`orientation ${orientation}\n`);
  const input = new Uint8Array(prefix.length + bytes.length);
  input.set(prefix);
  input.set(bytes, prefix.length);
  return sha256Hex(input);
}

/** R2 custom metadata of a quarantined image: the EXIF orientation (2..8) the media job applies; absent for 1. */
export const ORIENTATION_METADATA = "orientation";

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
export async function deleteUnreferencedObjects(
  svc: Pick<Services, "db" | "bindings">,
  kind: MediaKind,
  storageKeys: readonly string[],
): Promise<number> {
  const unique = [...new Set(storageKeys)];
  if (unique.length === 0) return 0;
  const table = kind === "images" ? images : files;
  const referenced = new Set<string>();
  // D1 binds at most 100 parameters per statement (the keys and the status).
  for (let i = 0; i < unique.length; i += 90) {
    const chunk = unique.slice(i, i + 90);
    const rows = await svc.db.all<{ storage_key: string }>(
      svc.db
        .selectDistinct({ storage_key: table.storage_key })
        .from(table)
        .where(and(inArray(table.storage_key, chunk), ne(table.status, "rejected"))),
    );
    for (const row of rows) referenced.add(row.storage_key);
  }
  const orphans = unique.filter((key) => !referenced.has(key)).flatMap((key) => objectKeys(kind, key));
  for (let i = 0; i < orphans.length; i += 1000) await svc.bindings.UPLOADS.delete(orphans.slice(i, i + 1000));
  return orphans.length;
}
