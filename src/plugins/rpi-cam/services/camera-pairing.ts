import { and, eq, gt, lte, ne, sql } from "drizzle-orm";
import type { Services } from "../../../container";
import { batchRows } from "../../../db/client";
import { columnsOf } from "../../../db/rows";
import { constantTimeEqual, toHex } from "../../../lib/encoding";
import { ApiError, notFound } from "../../../lib/problem";
import { cameraPairings } from "../schema";
import { CAMERA_COLUMNS, type CameraRow } from "./cameras";

/** The pairing code alphabet: no 0/O, 1/I, so a code read off a screen is typed right. */
export const PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const PAIRING_CODE_LENGTH = 6;
/** How long a registered code can be claimed and polled. */
export const PAIRING_TTL_SECONDS = 600;

/** What a device registers: its code, a fingerprint only it knows, and its public key. */
export interface PairingRegistration {
  code: string;
  fingerprint: string;
  publicKeyJwk: { kty: "EC"; crv: "P-256"; x: string; y: string };
  keyId: string;
}

/** The poll's answer: still waiting, or (once) the camera the device now is. */
export type PairingPoll = { status: "waiting" } | { status: "paired"; cameraId: string; keyId: string };

const codeNotFound = () =>
  notFound(
    "No pairing is waiting under this code: it was never registered, has expired, or was already completed.",
    "PAIRING_CODE_NOT_FOUND",
  );

async function fingerprintHash(fingerprint: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(fingerprint))));
}

/**
 * Registers a device's pairing code for ten minutes. A code still live under another
 * registration is 409 (the device draws a new one); an expired one is taken over. Ended
 * registrations are swept in the same batch. One round trip.
 */
export async function registerPairing(
  svc: Pick<Services, "db" | "clock">,
  registration: PairingRegistration,
): Promise<{ expiresAt: number }> {
  const now = Math.floor(svc.clock.now() / 1000);
  const expiresAt = now + PAIRING_TTL_SECONDS;
  const hash = await fingerprintHash(registration.fingerprint);
  const jwk = JSON.stringify(registration.publicKeyJwk);
  const [, written] = await batchRows<[unknown, { code: string }]>(svc.db, [
    svc.db.delete(cameraPairings).where(and(lte(cameraPairings.expires_at, now), ne(cameraPairings.code, registration.code))),
    // Raw: the upsert takes over a code only once it has expired (its own condition decides).
    sql`INSERT INTO camera_pairings (code, fingerprint_hash, key_id, public_key_jwk, camera_id, expires_at, created_at)
        VALUES (${registration.code}, ${hash}, ${registration.keyId}, ${jwk}, NULL, ${expiresAt}, ${now})
        ON CONFLICT (code) DO UPDATE SET fingerprint_hash = excluded.fingerprint_hash, key_id = excluded.key_id,
          public_key_jwk = excluded.public_key_jwk, camera_id = NULL, expires_at = excluded.expires_at, created_at = excluded.created_at
        WHERE camera_pairings.expires_at <= ${now}
        RETURNING code`,
  ]);
  if (written.length === 0) {
    throw new ApiError(409, { code: "PAIRING_CODE_IN_USE", detail: "This pairing code is already registered; draw another one." });
  }
  return { expiresAt };
}

/**
 * The owner's claim: turns a live, unclaimed code into a camera of `ownerId` holding the
 * device's key, in ONE batch, so of two claims of one code exactly one wins (the other: 409).
 * Unknown or expired codes: 404. One round trip.
 */
export async function claimPairing(
  svc: Pick<Services, "db" | "clock">,
  ownerId: number,
  claim: { code: string; name: string; description: string | null },
): Promise<CameraRow> {
  const now = Math.floor(svc.clock.now() / 1000);
  const cameraId = crypto.randomUUID();
  const open = sql`code = ${claim.code} AND camera_id IS NULL AND expires_at > ${now}`;
  const [created, , states] = await batchRows<[CameraRow, unknown, { camera_id: string | null }]>(svc.db, [
    // Raw: the camera is made from the pairing row, and both writes hold only while the code is open (one claim wins).
    sql`INSERT INTO cameras (id, owner_id, name, description, key_id, public_key_jwk, last_seen_at, created_at, updated_at)
        SELECT ${cameraId}, ${ownerId}, ${claim.name}, ${claim.description}, key_id, public_key_jwk, NULL, ${now}, ${now}
        FROM camera_pairings WHERE ${open}
        RETURNING ${CAMERA_COLUMNS}`,
    sql`UPDATE camera_pairings SET camera_id = ${cameraId} WHERE ${open}`,
    svc.db
      .select({ camera_id: cameraPairings.camera_id })
      .from(cameraPairings)
      .where(and(eq(cameraPairings.code, claim.code), gt(cameraPairings.expires_at, now))),
  ]);
  const camera = created[0];
  if (camera) return camera;
  if (states[0]) throw new ApiError(409, { code: "PAIRING_CODE_ALREADY_CLAIMED", detail: "This pairing code was already claimed." });
  throw codeNotFound();
}

/**
 * The device's poll. The fingerprint is compared as a SHA-256 digest in constant time (403 when
 * it differs). Once claimed, the first poll takes the pairing away with it (a conditional DELETE,
 * so two polls cannot both get it) and later polls are 404. One or two round trips.
 */
export async function pollPairing(svc: Pick<Services, "db" | "clock">, code: string, fingerprint: string): Promise<PairingPoll> {
  const now = Math.floor(svc.clock.now() / 1000);
  const rows = await svc.db.all<{ fingerprint_hash: string; camera_id: string | null; key_id: string }>(
    svc.db
      .select(columnsOf(cameraPairings, ["fingerprint_hash", "camera_id", "key_id"]))
      .from(cameraPairings)
      .where(and(eq(cameraPairings.code, code), gt(cameraPairings.expires_at, now))),
  );
  const row = rows[0];
  if (!row) throw codeNotFound();
  const encoder = new TextEncoder();
  if (!constantTimeEqual(encoder.encode(await fingerprintHash(fingerprint)), encoder.encode(row.fingerprint_hash))) {
    throw new ApiError(403, {
      code: "PAIRING_FINGERPRINT_MISMATCH",
      detail: "The fingerprint does not match the one registered with this code.",
    });
  }
  if (row.camera_id === null) return { status: "waiting" };
  const taken = await svc.db.all<{ camera_id: string }>(
    // Raw: a conditional DELETE, so of two polls only one takes the pairing.
    sql`DELETE FROM camera_pairings WHERE code = ${code} AND camera_id = ${row.camera_id} RETURNING camera_id`,
  );
  if (!taken[0]) throw codeNotFound();
  return { status: "paired", cameraId: taken[0].camera_id, keyId: row.key_id };
}
