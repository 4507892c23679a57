import { sql } from "drizzle-orm";
import type { Services } from "../../../container";

/** What D1 says of a camera whose tunnel is open. */
export type CameraRecord = "ok" | "deleted" | "owner-inactive";

/**
 * Writes a camera's last sign of life (epoch ms) to `cameras.last_seen_at`, never moving it
 * backwards (a replaced tunnel's late close would), and reports what D1 knows of the camera: the
 * heartbeat uses this to unpair a camera deleted behind its back. A failed write counts as `ok`:
 * the tunnel works without it, and the status route asks the relay object anyway.
 */
export async function recordLastSeen(svc: Pick<Services, "db" | "log">, cameraId: string, at: number, why: string): Promise<CameraRecord> {
  try {
    const rows = await svc.db.all<{ active: number }>(
      // Raw: the time only moves forward (max in the statement), and the owner's state comes back with it.
      sql`UPDATE cameras SET last_seen_at = max(coalesce(last_seen_at, 0), ${Math.floor(at / 1000)}) WHERE id = ${cameraId}
          RETURNING (SELECT is_active FROM users u WHERE u.id = cameras.owner_id) AS active`,
    );
    const row = rows[0];
    if (!row) return "deleted";
    return row.active === 1 ? "ok" : "owner-inactive";
  } catch (error) {
    svc.log.error("camera last_seen_at not recorded", { camera_id: cameraId, why, error });
    return "ok";
  }
}
