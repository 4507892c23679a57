import { sql } from "drizzle-orm";
import { batchRows, type Db } from "../db/client";
import { toHex } from "../lib/encoding";

// The idempotency store (docs/idempotency.md): one row of `idempotency_keys` per user and key.
// A row with `response_status` null is the in-flight marker of a request still running; a row
// with a status holds the response to replay. Every decision is taken by one conditional
// statement inside one D1 batch, because D1 has no interactive transactions and two isolates
// may race for the same key.

/** How long a stored response is replayed (spec: one hour). */
export const IDEMPOTENCY_TTL_SECONDS = 3600;

/**
 * How long an in-flight marker holds its key. A request that never finishes (its isolate was
 * killed between claim and answer) would otherwise block its key for the whole hour; past the
 * lease a retry takes the key over. Far longer than any create runs: a request still running when
 * its lease ends loses the key (its response is then not stored), and only then could a retry
 * create a second record.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 120;

/** Expired rows (of any user) removed by each claim, so the table stays bounded without a cron. */
const SWEEP_LIMIT = 20;

/** What identifies one request sent under a key: who sent it, where to, with which body. */
export interface ClaimInput {
  userId: number;
  /** The client's `Idempotency-Key`, as sent. */
  key: string;
  /** Method, path and query string of the request, e.g. `POST /v1/products/7/components`. */
  target: string;
  /** Hex SHA-256 of the raw request body (`sha256Hex`). */
  bodyHash: string;
  /** Current time, Unix seconds. */
  now: number;
}

/**
 * A held in-flight marker. `leaseExpiresAt` fences it: a marker taken over after its lease ended
 * always has a later expiry, so a late `storeResponse` or `releaseKey` of the old holder matches
 * nothing instead of touching the new holder's row.
 */
export interface Claim {
  userId: number;
  key: string;
  leaseExpiresAt: number;
}

/** A response kept for replay: only 2xx responses are stored. */
export interface StoredResponse {
  status: number;
  body: string;
  /** The headers worth replaying (`Content-Type`, `Location`, `ETag`), by their canonical names. */
  headers: Record<string, string>;
}

export type ClaimResult =
  /** The caller holds the key: run the request, then `storeResponse` or `releaseKey`. */
  | { kind: "claimed"; claim: Claim }
  /** The same request completed before: answer with its response. */
  | ({ kind: "replay" } & StoredResponse)
  /** The same request is running right now. */
  | { kind: "in-progress" }
  /** The key was used for another target or body within the retention time. */
  | { kind: "mismatch" };

interface KeyRow {
  target: string;
  body_hash: string;
  response_status: number | null;
  response_body: string | null;
  response_headers: string | null;
}

/** Lower-case hex SHA-256 of `bytes`: the fingerprint of a request body. */
export async function sha256Hex(bytes: ArrayBuffer | ArrayBufferView): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/**
 * Claims `key` for one request, or says what became of an earlier request with it, in one round
 * trip. Exactly one of any number of concurrent claimers wins: the upsert inserts a marker when
 * the key is free and overwrites a row only when it has expired (a stored response past its hour,
 * or a marker past its lease), and D1 runs the statements of one batch as one transaction, one
 * batch at a time. Its `RETURNING` yields a row only when this statement wrote it; otherwise the
 * following `SELECT` reads the live row that stood in the way.
 */
export async function claimKey(db: Db, input: ClaimInput): Promise<ClaimResult> {
  const { userId, key, target, bodyHash, now } = input;
  const leaseExpiresAt = now + IDEMPOTENCY_LEASE_SECONDS;
  const [, claimed, existing] = await batchRows<[never, { lease_expires_at: number }, KeyRow]>(db, [
    // Housekeeping on the expiry index; bounded, so no request pays for a backlog at once.
    sql`DELETE FROM idempotency_keys WHERE rowid IN (
      SELECT rowid FROM idempotency_keys WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${SWEEP_LIMIT})`,
    sql`INSERT INTO idempotency_keys
        (user_id, key, target, body_hash, response_status, response_body, response_headers, created_at, expires_at)
      VALUES (${userId}, ${key}, ${target}, ${bodyHash}, NULL, NULL, NULL, ${now}, ${leaseExpiresAt})
      ON CONFLICT (user_id, key) DO UPDATE SET
        target = excluded.target, body_hash = excluded.body_hash, response_status = NULL,
        response_body = NULL, response_headers = NULL, created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= ${now}
      RETURNING expires_at AS lease_expires_at`,
    sql`SELECT target, body_hash, response_status, response_body, response_headers
      FROM idempotency_keys WHERE user_id = ${userId} AND key = ${key}`,
  ]);

  const won = claimed[0];
  if (won) return { kind: "claimed", claim: { userId, key, leaseExpiresAt: won.lease_expires_at } };
  const row = existing[0];
  // Cannot happen inside one transaction: the upsert either wrote the row or was blocked by it.
  if (!row) throw new Error("idempotency claim found neither a free key nor a holder");
  if (row.target !== target || row.body_hash !== bodyHash) return { kind: "mismatch" };
  if (row.response_status === null) return { kind: "in-progress" };
  return {
    kind: "replay",
    status: row.response_status,
    body: row.response_body ?? "",
    headers: row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : {},
  };
}

/**
 * Turns a held marker into the stored response, replayed for `IDEMPOTENCY_TTL_SECONDS` from
 * `now`; one round trip. Returns false when the marker is no longer this claim's (its lease ran
 * out and another request took the key over), in which case nothing is written.
 */
export async function storeResponse(db: Db, claim: Claim, response: StoredResponse, now: number): Promise<boolean> {
  const rows = await db.all<{ user_id: number }>(sql`UPDATE idempotency_keys SET
      response_status = ${response.status}, response_body = ${response.body},
      response_headers = ${JSON.stringify(response.headers)}, expires_at = ${now + IDEMPOTENCY_TTL_SECONDS}
    WHERE user_id = ${claim.userId} AND key = ${claim.key}
      AND response_status IS NULL AND expires_at = ${claim.leaseExpiresAt}
    RETURNING user_id`);
  return rows.length > 0;
}

/**
 * Gives a held key up (the request failed), so that a retry with the same key runs afresh; one
 * round trip. Returns false when the marker is no longer this claim's; nothing is deleted then.
 */
export async function releaseKey(db: Db, claim: Claim): Promise<boolean> {
  const rows = await db.all<{ user_id: number }>(sql`DELETE FROM idempotency_keys
    WHERE user_id = ${claim.userId} AND key = ${claim.key}
      AND response_status IS NULL AND expires_at = ${claim.leaseExpiresAt}
    RETURNING user_id`);
  return rows.length > 0;
}
