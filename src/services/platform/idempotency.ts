import { and, asc, eq, inArray, lte, type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { isConstraintFailure } from "../../db/constraint-errors";
import { columnsOf, type RowOf } from "../../db/rows";
import { idempotencyKeys } from "../../db/schema";
import { toHex } from "../../lib/encoding";
import type { HeldKey } from "../../lib/idempotency-key";
import { ApiError } from "../../lib/problem";

// The idempotency store (docs/idempotency.md): one row of `idempotency_keys` per user, scope
// (method and path) and key. A row is running (the in-flight marker of a request), committed (the
// create's own batch wrote the id of the record it made) or stored (the response to replay).
// Every decision is taken by one conditional statement inside one D1 batch, because D1 has no
// interactive transactions and two isolates may race for the same key.

/** How long a stored response is replayed (spec: one hour). */
export const IDEMPOTENCY_TTL_SECONDS = 3600;

/**
 * How long an in-flight marker holds its key. A request that dies before its create commits
 * (its isolate killed) would otherwise block its key for the whole hour; past the lease a retry
 * takes the key over and runs. A create that commits marks the key in its own batch, so a crash
 * after that point never leads to a takeover; and a create still running when its lease is taken
 * over cannot commit any more (`commitStatements` fails its batch).
 */
export const IDEMPOTENCY_LEASE_SECONDS = 120;

/** Expired rows (of any user) removed by each claim, so the table stays bounded without a cron. */
const SWEEP_LIMIT = 20;

/** What identifies one request sent under a key: who sent it, where to, with which body. */
export interface ClaimInput {
  userId: number;
  /** The client's `Idempotency-Key`, as sent. */
  key: string;
  /** Method and path, e.g. `POST /v1/products/7/components`: the key is one key per user and scope. */
  scope: string;
  /** Method, path and query string of the request, as sent: compared, with the body, for replay. */
  target: string;
  /** Hex SHA-256 of the raw request body (`sha256Hex`). */
  bodyHash: string;
  /** Current time, Unix seconds. */
  now: number;
}

/** A response kept for replay: only 2xx responses are stored. */
export interface StoredResponse {
  status: number;
  body: string;
  /** The headers worth replaying (`Content-Type`, `Location`, `ETag`), by their canonical names. */
  headers: Record<string, string>;
}

export type ClaimResult =
  /** The caller holds the key: run the request (a create commits with `commitStatements`), then `storeResponse` or `releaseKey`. */
  | { kind: "claimed"; held: HeldKey }
  /** The same request completed before: answer with its response. */
  | ({ kind: "replay" } & StoredResponse)
  /** The same request's create committed, but its response was never stored (the request died in between): answer from the record. */
  | { kind: "committed"; resourceId: number }
  /** The same request is running right now. */
  | { kind: "in-progress" }
  /** The key was used on this path for another request (query string or body) within the retention time. */
  | { kind: "mismatch" };

const KEY_COLUMNS = ["target", "body_hash", "resource_id", "response_status", "response_body", "response_headers"] as const;

type KeyRow = RowOf<typeof idempotencyKeys, (typeof KEY_COLUMNS)[number]>;

/** 409 while the request that holds a key runs (or took it over from this one). */
export function requestInProgress(): ApiError {
  return new ApiError(409, {
    code: "IDEMPOTENCY_REQUEST_IN_PROGRESS",
    detail: "A request with this Idempotency-Key is still being processed; retry shortly to receive its response.",
    headers: { "Retry-After": "1" },
  });
}

/** Lower-case hex SHA-256 of `bytes`: the fingerprint of a request body. */
export async function sha256Hex(bytes: ArrayBuffer | ArrayBufferView): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

const keyIs = (held: Pick<HeldKey, "userId" | "scope" | "key">): SQL =>
  and(eq(idempotencyKeys.user_id, held.userId), eq(idempotencyKeys.scope, held.scope), eq(idempotencyKeys.key, held.key))!;

/**
 * Claims `key` for one request, or says what became of an earlier request with it, in one round
 * trip. Exactly one of any number of concurrent claimers wins: the upsert inserts a marker when
 * the key is free and overwrites a row only when it has expired (a stored or committed response
 * past its hour, or a marker past its lease), and D1 runs the statements of one batch as one
 * transaction, one batch at a time. Its `RETURNING` yields a row only when this statement wrote
 * it; otherwise the following `SELECT` reads the live row that stood in the way.
 */
export async function claimKey(svc: Pick<Services, "db">, input: ClaimInput): Promise<ClaimResult> {
  const { userId, key, scope, target, bodyHash, now } = input;
  const claim = crypto.randomUUID();
  const [, claimed, existing] = await batchRows<[never, { claim: string }, KeyRow]>(svc.db, [
    // Housekeeping on the expiry index; bounded, so no request pays for a backlog at once.
    svc.db
      .delete(idempotencyKeys)
      .where(
        inArray(
          sql`rowid`,
          svc.db
            .select({ rowid: sql`rowid` })
            .from(idempotencyKeys)
            .where(lte(idempotencyKeys.expires_at, now))
            .orderBy(asc(idempotencyKeys.expires_at))
            .limit(SWEEP_LIMIT),
        ),
      ),
    // Raw: compare-and-set upsert; it overwrites a row only when that row has expired (its own condition).
    sql`INSERT INTO idempotency_keys (user_id, scope, key, target, body_hash, claim, resource_id, response_status,
        response_body, response_headers, created_at, expires_at)
      VALUES (${userId}, ${scope}, ${key}, ${target}, ${bodyHash}, ${claim}, NULL, NULL, NULL, NULL, ${now}, ${now + IDEMPOTENCY_LEASE_SECONDS})
      ON CONFLICT (user_id, scope, key) DO UPDATE SET
        target = excluded.target, body_hash = excluded.body_hash, claim = excluded.claim, resource_id = NULL,
        response_status = NULL, response_body = NULL, response_headers = NULL, created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= ${now}
      RETURNING claim`,
    svc.db.select(columnsOf(idempotencyKeys, KEY_COLUMNS)).from(idempotencyKeys).where(keyIs(input)),
  ]);

  if (claimed[0]) return { kind: "claimed", held: { userId, scope, key, claim: claimed[0].claim } };
  const row = existing[0];
  // Cannot happen inside one transaction: the upsert either wrote the row or was blocked by it.
  if (!row) throw new Error("idempotency claim found neither a free key nor a holder");
  if (row.target !== target || row.body_hash !== bodyHash) return { kind: "mismatch" };
  if (row.response_status !== null) {
    return {
      kind: "replay",
      status: row.response_status,
      body: row.response_body ?? "",
      headers: row.response_headers ? (JSON.parse(row.response_headers) as Record<string, string>) : {},
    };
  }
  if (row.resource_id !== null) return { kind: "committed", resourceId: row.resource_id };
  return { kind: "in-progress" };
}

/**
 * The statements that make a create exactly-once: put them at the end of the create's own batch.
 * The first fails the whole batch, so that nothing is created, when this request no longer holds
 * its key (its lease ran out and another request took the key over, or the sweep removed it); the
 * second marks the key committed with `resourceId` (SQL for the id of the record made) when `made`
 * holds, so that a retry after a crash between this batch and `storeResponse` answers from the
 * record instead of creating it again. No round trip of their own.
 */
export function commitStatements(held: HeldKey, resourceId: SQL, now: number, made: SQL = sql`1`): SQL[] {
  // Raw: an assertion that fails the batch, and a mark guarded by the claim (compare-and-set).
  return [
    // SQLite has no assertion statement: this inserts a row whose NULL claim breaks its NOT NULL
    // constraint exactly when the key is not held, which aborts the batch (see isKeyLost).
    sql`INSERT INTO idempotency_keys (user_id, scope, key, target, body_hash, claim, created_at, expires_at)
      SELECT ${held.userId}, ${held.scope}, ${held.key}, '', '', NULL, ${now}, ${now}
      WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE ${keyIs(held)} AND claim = ${held.claim}
        AND resource_id IS NULL AND response_status IS NULL)`,
    sql`UPDATE idempotency_keys SET resource_id = ${resourceId}, expires_at = ${now + IDEMPOTENCY_TTL_SECONDS}
      WHERE ${keyIs(held)} AND claim = ${held.claim} AND (${made})`,
  ];
}

/** Whether a batch failed because the first of its `commitStatements` found the key no longer held. */
export function isKeyLost(error: unknown): boolean {
  return isConstraintFailure(error, "NOT NULL", "idempotency_keys.claim");
}

/**
 * Stores the response of a held key, replayed for `IDEMPOTENCY_TTL_SECONDS` from `now`; one round
 * trip. Works on a running or a committed key. Returns false when the key is no longer this
 * request's (its lease ran out and another request took it over), in which case nothing is written.
 */
export async function storeResponse(svc: Pick<Services, "db">, held: HeldKey, response: StoredResponse, now: number): Promise<boolean> {
  // Raw: compare-and-set on the claim, and only while no response is stored.
  const rows = await svc.db.all<{ user_id: number }>(sql`UPDATE idempotency_keys SET
      response_status = ${response.status}, response_body = ${response.body},
      response_headers = ${JSON.stringify(response.headers)}, expires_at = ${now + IDEMPOTENCY_TTL_SECONDS}
    WHERE ${keyIs(held)} AND claim = ${held.claim} AND response_status IS NULL
    RETURNING user_id`);
  return rows.length > 0;
}

/**
 * Gives a held key up (the request failed), so that a retry with the same key runs afresh; one
 * round trip. Returns false when the key is no longer this request's, or when its create committed
 * (a failure after the commit must not let a retry create the record again); nothing is deleted then.
 */
export async function releaseKey(svc: Pick<Services, "db">, held: HeldKey): Promise<boolean> {
  // Raw: compare-and-set on the claim, and only while nothing was committed or stored.
  const rows = await svc.db.all<{ user_id: number }>(sql`DELETE FROM idempotency_keys
    WHERE ${keyIs(held)} AND claim = ${held.claim} AND resource_id IS NULL AND response_status IS NULL
    RETURNING user_id`);
  return rows.length > 0;
}
