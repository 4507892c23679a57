import { createLogger } from "../src/lib/logger";

const log = createLogger({ component: "camera-relay" });

/** What D1 says of a camera whose tunnel is open. */
export type CameraRecord = "ok" | "deleted" | "owner-inactive";

/**
 * Writes a camera's last sign of life (epoch ms) to `cameras.last_seen_at`, never moving it
 * backwards (a replaced tunnel's late close would), and reports what D1 knows of the camera: the
 * heartbeat uses this to unpair a camera deleted behind its back. A failed write counts as `ok`:
 * the tunnel works without it, and the status route asks the relay object anyway.
 */
export async function recordLastSeen(db: D1Database, cameraId: string, at: number, why: string): Promise<CameraRecord> {
  try {
    const row = await db
      .prepare(
        `UPDATE cameras SET last_seen_at = max(coalesce(last_seen_at, 0), ?1) WHERE id = ?2
         RETURNING (SELECT is_active FROM users u WHERE u.id = cameras.owner_id) AS active`,
      )
      .bind(Math.floor(at / 1000), cameraId)
      .first<{ active: number }>();
    if (!row) return "deleted";
    return row.active === 1 ? "ok" : "owner-inactive";
  } catch (error) {
    log.error("camera last_seen_at not recorded", { camera_id: cameraId, why, error });
    return "ok";
  }
}
