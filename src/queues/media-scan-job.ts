import { sql } from "drizzle-orm";
import { loadConfig } from "../config";
import { createDb, type Db } from "../db/client";
import type { AppBindings } from "../env";
import { audit } from "../lib/audit";
import type { Logger } from "../lib/logger";
import { deleteMedia } from "../services/media";
import { builtInScan, externalScan, type ScanVerdict } from "../services/media-scan";
import { deleteUnreferencedObjects, IMMUTABLE_CACHE, type MediaKind, quarantineKey, servedKey } from "../services/media-storage";
import type { MediaMessage } from "./media-messages";

interface PendingRow {
  storage_key: string;
  content_type: string;
  status: "pending" | "clean";
  thumbnails_ready: number;
}

async function readRow(db: Db, kind: MediaKind, id: string): Promise<PendingRow | undefined> {
  const ready = kind === "images" ? sql`thumbnails_ready` : sql`1 AS thumbnails_ready`;
  const rows = await db.all<PendingRow>(sql`SELECT storage_key, content_type, status, ${ready} FROM ${sql.raw(kind)} WHERE id = ${id}`);
  return rows[0];
}

/**
 * `media.scan`: scans an upload in quarantine with the built-in signatures and, when configured,
 * the external scanner. Clean: the bytes are published under their content key, the row turns
 * `clean` (and the image's thumbnails are queued); infected: the row goes (quota released) and
 * the bytes with it. Every step can run again: a redelivered message finds the row clean, or
 * gone, and finishes what is left. A scanner failure throws, so the message is retried and, in
 * the end, parked in the dead-letter queue with the upload still unpublished (fail closed).
 */
export async function scanJob(message: Extract<MediaMessage, { type: "media.scan" }>, env: AppBindings, log: Logger): Promise<void> {
  const { kind, id } = message;
  const { db } = createDb(env.DB);
  const bucket = env.UPLOADS;
  const row = await readRow(db, kind, id);
  if (!row) {
    await bucket.delete(quarantineKey(kind, id));
    log.info("media scan skipped: the upload was deleted", { media: kind, media_id: id });
    return;
  }
  if (row.status === "clean") {
    await bucket.delete(quarantineKey(kind, id));
    if (kind === "images" && !row.thumbnails_ready) await env.MEDIA_QUEUE.send({ type: "media.thumbnails", id } satisfies MediaMessage);
    return;
  }
  const quarantined = await bucket.head(quarantineKey(kind, id));
  if (!quarantined) throw new Error("the quarantined bytes of a pending upload are missing");

  const verdict = await scan(env, kind, id, quarantined.size);
  if (verdict.infected) {
    await deleteMedia(db, null, kind, id).catch(() => undefined);
    await bucket.delete(quarantineKey(kind, id));
    audit(log, "media.scan.infected", { media: kind, media_id: id, threat: verdict.signature, scanner: verdict.scanner });
    return;
  }

  const body = await bucket.get(quarantineKey(kind, id));
  if (!body) throw new Error("the quarantined bytes vanished during the scan");
  await bucket.put(servedKey(kind, row.storage_key), body.body, {
    httpMetadata: { contentType: row.content_type, cacheControl: IMMUTABLE_CACHE },
  });
  // An image whose bytes another row already published with thumbnails needs none of its own.
  const thumbnails =
    kind === "images" ? sql`, thumbnails_ready = EXISTS (SELECT 1 FROM images o WHERE o.storage_key = ${row.storage_key} AND o.thumbnails_ready = 1)` : sql``;
  const published = await db.all<{ thumbnails_ready: number }>(
    sql`UPDATE ${sql.raw(kind)} SET status = 'clean', updated_at = unixepoch()${thumbnails}
        WHERE id = ${id} AND status = 'pending' RETURNING ${kind === "images" ? sql`thumbnails_ready` : sql`1 AS thumbnails_ready`}`,
  );
  await bucket.delete(quarantineKey(kind, id));
  if (published.length === 0) {
    // Deleted while being scanned: the object just published may belong to nobody.
    await deleteUnreferencedObjects(db, bucket, kind, [row.storage_key]);
    return;
  }
  log.info("media scan passed", { media: kind, media_id: id });
  if (kind === "images" && !published[0]!.thumbnails_ready) await env.MEDIA_QUEUE.send({ type: "media.thumbnails", id } satisfies MediaMessage);
}

/** The built-in scan, then the external one when configured; each reads the quarantined bytes as a stream. */
async function scan(env: AppBindings, kind: MediaKind, id: string, size: number): Promise<ScanVerdict> {
  const config = loadConfig(env);
  const read = async () => {
    const object = await env.UPLOADS.get(quarantineKey(kind, id));
    if (!object) throw new Error("the quarantined bytes vanished during the scan");
    return object.body;
  };
  const builtIn = await builtInScan(await read(), config.malwareScan);
  if (builtIn.infected || !config.malwareScan.external) return builtIn;
  return externalScan(await read(), size, config.malwareScan.external, config.outbound);
}

/** `media.purge`: removes the objects of storage keys no row names any more (after records were deleted). */
export async function purgeJob(message: Extract<MediaMessage, { type: "media.purge" }>, env: AppBindings, log: Logger): Promise<void> {
  const { db } = createDb(env.DB);
  const removed = await deleteUnreferencedObjects(db, env.UPLOADS, message.kind, message.keys);
  log.info("media purged", { media: message.kind, keys: message.keys.length, objects_deleted: removed });
}
