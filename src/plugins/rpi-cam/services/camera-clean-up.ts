import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Services } from "../../../container";
import type { RowOf } from "../../../db/rows";
import { cameraRetirements, cameraStreamEndings } from "../schema";
import { retireCamera } from "./camera-relay";
import { endStreamOfDeletedProduct } from "./camera-streams";

// The plugin's side of the core's deletions. The core deletes users and products without knowing
// of cameras; the cascade takes the plugin's rows along, and triggers (migration 0018) keep what
// must still happen outside D1 in `camera_retirements` and `camera_stream_endings`, in the same
// transaction. Here that work is done: on the domain event that follows the deletion (retried by
// the queue while it fails), and by the scheduled reconciliation for what an event missed (a crash
// between the commit and the send, or retries run out). Every step may run twice.

/**
 * How long a clean-up waits for its event before the scheduled reconciliation does it: events come
 * within seconds and retry for a few minutes, so a row this old was missed (or keeps failing).
 */
export const RECONCILE_AFTER_SECONDS = 10 * 60;

/** Rows handled per table per run; the rest wait for the next event or run. */
const CLEAN_UP_BATCH = 100;

/** Which clean-ups to do: those a domain event names, or every one older than a time (reconciliation). */
export type CleanUpScope = { productIds: readonly number[] } | { userId: number } | { createdBefore: number };

type Retirement = RowOf<typeof cameraRetirements, "camera_id">;
type Ending = RowOf<typeof cameraStreamEndings, "camera_id" | "broadcast_id" | "stream_id" | "user_id">;

function retirementsIn(scope: CleanUpScope): SQL {
  if ("productIds" in scope) return sql`0`;
  return "userId" in scope ? sql`owner_id = ${scope.userId}` : sql`created_at <= ${scope.createdBefore}`;
}

function endingsIn(scope: CleanUpScope): SQL {
  // One bound parameter however many ids (D1 binds at most 100).
  if ("productIds" in scope) return sql`product_id IN (SELECT value FROM json_each(${JSON.stringify(scope.productIds)}))`;
  return "userId" in scope ? sql`user_id = ${scope.userId}` : sql`created_at <= ${scope.createdBefore}`;
}

/**
 * Retires the cameras of deleted accounts (devices told to unpair, tunnels closed, preview
 * thumbnails removed) and ends the streams of deleted products, in `scope`. A row goes once its
 * work is done; throws when some could not be done, after trying every one, so that the event is
 * retried (or the next scheduled run takes it).
 */
export async function cleanUp(svc: Services, scope: CleanUpScope): Promise<{ retired: number; ended: number }> {
  const [retirements, endings] = await Promise.all([
    // Raw (both): the scope is a condition composed from parts (an account, a date, JSON product ids).
    svc.db.all<Retirement>(
      sql`SELECT camera_id FROM camera_retirements WHERE ${retirementsIn(scope)} ORDER BY created_at LIMIT ${CLEAN_UP_BATCH}`,
    ),
    svc.db.all<Ending>(
      sql`SELECT camera_id, broadcast_id, stream_id, user_id FROM camera_stream_endings WHERE ${endingsIn(scope)} ORDER BY created_at LIMIT ${CLEAN_UP_BATCH}`,
    ),
  ]);
  let failed = 0;
  let retired = 0;
  let ended = 0;
  for (const { camera_id } of retirements) {
    if (!(await retireCamera(svc, camera_id, true))) {
      failed++;
      continue;
    }
    await svc.db.run(svc.db.delete(cameraRetirements).where(eq(cameraRetirements.camera_id, camera_id)));
    retired++;
  }
  for (const ending of endings) {
    try {
      await endStreamOfDeletedProduct(svc, ending);
    } catch {
      failed++;
      continue;
    }
    await svc.db.run(
      svc.db
        .delete(cameraStreamEndings)
        .where(and(eq(cameraStreamEndings.camera_id, ending.camera_id), eq(cameraStreamEndings.broadcast_id, ending.broadcast_id))),
    );
    ended++;
  }
  if (retired + ended + failed > 0) svc.log.info("camera clean-up", { retired, ended, failed });
  if (failed > 0) throw new Error(`${failed} camera clean-up(s) failed; they are tried again`);
  return { retired, ended };
}
