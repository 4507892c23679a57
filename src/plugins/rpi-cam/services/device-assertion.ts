import { and, eq, lt, sql } from "drizzle-orm";
import { decodeProtectedHeader, errors, importJWK, type JWK, jwtVerify } from "jose";
import type { Services } from "../../../container";
import { batchRows } from "../../../db/client";
import { columnsOf } from "../../../db/rows";
import { users } from "../../../db/schema";
import { ApiError } from "../../../lib/problem";
import { cameraAssertionJtis, cameras } from "../schema";

/** The `aud` every device assertion names (decisions.md, Device assertion). */
export const DEVICE_ASSERTION_AUDIENCE = "relab-rpi-cam-relay";
/** Longest lifetime an assertion may claim (`exp - iat`), and how far ahead `exp` may be. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 120;
/** Clock skew allowed between a device and the service. */
const CLOCK_TOLERANCE_SECONDS = 5;

/** The camera a valid assertion speaks for, with what its callbacks need of the owner. */
export interface DeviceCamera {
  id: string;
  ownerId: number;
  ownerRole: "contributor" | "lab";
}

/** The one answer to every refused assertion, whatever the reason (the log has the reason). */
export function deviceAssertionRefused(): ApiError {
  return new ApiError(401, {
    code: "DEVICE_ASSERTION_INVALID",
    detail: "The device assertion is missing, invalid, expired or already used.",
    headers: { "WWW-Authenticate": 'Bearer realm="rpi-cam-device", error="invalid_token"' },
  });
}

/** The issuer and subject of `cameraId`'s assertions. */
export const deviceSubject = (cameraId: string) => `camera:${cameraId}`;

class Refused extends Error {}

/**
 * Checks `Authorization: Bearer <assertion>` for camera `cameraId` and spends its `jti`: an ES256
 * JWT signed by the camera's registered key, naming its key id in `kid`, with `iss` = `sub` =
 * `camera:<id>`, `aud` = `relab-rpi-cam-relay`, `iat` not in the future, `nbf`, `exp` after now
 * and at most 120 s after `iat` (so never more than 120 s ahead), and a `jti` never seen before for this camera. Header members such as `jwk`,
 * `jku` or `x5u` are never used: the key is always the stored one. A deleted (revoked) camera,
 * or one whose owner is inactive, has no key. Two round trips: the camera, then the `jti`
 * insert (atomic: of two requests with one `jti`, exactly one passes). Any failure: 401.
 */
export async function verifyDeviceAssertion(
  svc: Pick<Services, "db" | "log">,
  authorization: string | undefined,
  cameraId: string,
): Promise<DeviceCamera> {
  try {
    return await verify(svc, authorization, cameraId);
  } catch (error) {
    // Anything else (the database failing, say) is the service's fault, not the device's.
    if (!(error instanceof Refused || error instanceof errors.JOSEError)) throw error;
    svc.log.warn("device assertion refused", { camera_id: cameraId, reason: error.message });
    throw deviceAssertionRefused();
  }
}

async function verify(svc: Pick<Services, "db">, authorization: string | undefined, cameraId: string): Promise<DeviceCamera> {
  const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(authorization ?? "");
  if (!match) throw new Refused("no bearer assertion");
  const token = match[1]!;
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    // jose throws a plain TypeError for a header that is not a JSON object.
    throw new Refused("unreadable header");
  }
  if (header.alg !== "ES256") throw new Refused("alg is not ES256");
  if (typeof header.kid !== "string") throw new Refused("no kid");

  const rows = await svc.db.all<{ id: string; owner_id: number; role: "contributor" | "lab"; key_id: string; public_key_jwk: string }>(
    svc.db
      .select({ ...columnsOf(cameras, ["id", "owner_id", "key_id", "public_key_jwk"]), role: users.role })
      .from(cameras)
      .innerJoin(users, eq(users.id, cameras.owner_id))
      .where(and(eq(cameras.id, cameraId), eq(users.is_active, true))),
  );
  const camera = rows[0];
  if (!camera) throw new Refused("unknown or revoked camera");
  if (header.kid !== camera.key_id) throw new Refused("kid does not match");

  const key = await importJWK(JSON.parse(camera.public_key_jwk) as JWK, "ES256");
  const subject = deviceSubject(cameraId);
  const { payload } = await jwtVerify(token, key, {
    algorithms: ["ES256"],
    issuer: subject,
    subject,
    audience: DEVICE_ASSERTION_AUDIENCE,
    requiredClaims: ["iat", "nbf", "exp", "jti"],
    maxTokenAge: MAX_ASSERTION_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS,
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
  });
  const now = Math.floor(Date.now() / 1000);
  const { iat, exp, jti } = payload as { iat: number; exp: number; jti: unknown };
  if (exp - iat > MAX_ASSERTION_LIFETIME_SECONDS) throw new Refused("lifetime over 120 s");
  if (typeof jti !== "string" || jti.length < 8 || jti.length > 128) throw new Refused("jti must be 8 to 128 characters");

  const [, inserted] = await batchRows<[unknown, { jti: string }]>(svc.db, [
    svc.db
      .delete(cameraAssertionJtis)
      .where(and(eq(cameraAssertionJtis.camera_id, cameraId), lt(cameraAssertionJtis.expires_at, now - CLOCK_TOLERANCE_SECONDS))),
    // Raw: insert-if-absent: a replayed jti inserts nothing, and the empty RETURNING refuses it.
    sql`INSERT INTO camera_assertion_jtis (camera_id, jti, expires_at) VALUES (${cameraId}, ${jti}, ${exp})
        ON CONFLICT DO NOTHING RETURNING jti`,
  ]);
  if (inserted.length === 0) throw new Refused("jti replayed");
  return { id: camera.id, ownerId: camera.owner_id, ownerRole: camera.role };
}
