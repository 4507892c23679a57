import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { isSealedWithCurrent, openField, SealedKeyUnavailable, sealField } from "../../lib/data-encryption";

/**
 * Where the service keeps values sealed with the data key (src/lib/data-encryption.ts), so that a
 * key rotation can move them all to the new key (docs/operations.md, Rotating
 * DATA_ENCRYPTION_KEY). A plugin lists its own in `Plugin.sealedColumns`.
 */
export interface SealedColumn {
  readonly table: string;
  readonly column: string;
  /** SQL over the row that gives the value's sealing context, as the code that sealed it built it. */
  readonly context: string;
}

/** The core's sealed columns; the contexts are those of mfa-codes.ts, oauth-accounts.ts and oauth-handoffs.ts. */
export const CORE_SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "users", column: "totp_secret", context: "'totp:' || id" },
  { table: "oauth_accounts", column: "access_token_sealed", context: "'oauth:' || provider || ':' || account_id" },
  { table: "oauth_accounts", column: "refresh_token_sealed", context: "'oauth:' || provider || ':' || account_id" },
  { table: "oauth_handoffs", column: "secret_sealed", context: "'oauth-handoff:' || fingerprint" },
];

/** Values re-sealed per round trip pair (one read, one batch of compare-and-set updates). */
const PAGE = 100;
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export interface ReencryptionReport {
  /** Values now sealed with the current key. */
  moved: number;
  /** Values whose key is not configured any more: they stay as they are (docs/operations.md says what their users see). */
  unreadable: number;
  /** Values that opened with no key of the ring (tampered, or sealed for another row): left as they are, logged. */
  unopenable: number;
  /** False when the deadline came first: the next run goes on. */
  complete: boolean;
}

/**
 * The re-encryption job: moves every value sealed with another key than the ring's current one to
 * the current key, a page at a time, each value by a compare-and-set on its old ciphertext (a
 * value changed meanwhile, a new TOTP enrolment say, is left to the writer that changed it). Runs
 * on the Cron Trigger until `deadline` (epoch ms) and starts again from the beginning on the next
 * run: what was moved no longer matches, so the state lives in the values themselves. With a ring
 * of one key there is nothing it could move, and it reads nothing.
 */
export async function reencryptSealedValues(
  svc: Pick<Services, "db" | "config" | "log">,
  columns: readonly SealedColumn[],
  deadline: number,
): Promise<ReencryptionReport> {
  const ring = svc.config.dataKey;
  const report: ReencryptionReport = { moved: 0, unreadable: 0, unopenable: 0, complete: true };
  if (ring.keys.size < 2) return report;
  const current = `v2.${ring.current}.%`;
  for (const { table, column, context } of columns) {
    if (!IDENTIFIER.test(table) || !IDENTIFIER.test(column)) throw new Error(`not a plain identifier: ${table}.${column}`);
    let cursor = 0;
    for (;;) {
      if (Date.now() >= deadline) {
        report.complete = false;
        break;
      }
      const rows = await svc.db.all<{ row: number; sealed: string; context: string }>(
        // Raw: the table and columns come from the list of sealed columns at run time, paged by rowid.
        sql`SELECT rowid AS row, ${sql.raw(column)} AS sealed, ${sql.raw(context)} AS context FROM ${sql.raw(table)}
          WHERE rowid > ${cursor} AND ${sql.raw(column)} IS NOT NULL AND ${sql.raw(column)} NOT LIKE ${current}
          ORDER BY rowid LIMIT ${PAGE}`,
      );
      const updates: SQL[] = [];
      for (const row of rows) {
        if (isSealedWithCurrent(ring, row.sealed)) continue;
        let plain: Uint8Array;
        try {
          plain = await openField(ring, row.sealed, row.context);
        } catch (error) {
          if (error instanceof SealedKeyUnavailable) report.unreadable++;
          else {
            report.unopenable++;
            svc.log.warn("a sealed value does not open with its key", { table, column, row: row.row });
          }
          continue;
        }
        const resealed = await sealField(ring, plain, row.context);
        updates.push(
          sql`UPDATE ${sql.raw(table)} SET ${sql.raw(column)} = ${resealed} WHERE rowid = ${row.row} AND ${sql.raw(column)} = ${row.sealed} RETURNING 1 AS moved`,
        );
      }
      if (updates.length > 0) {
        const results = await batchRows<unknown[]>(svc.db, updates);
        report.moved += results.filter((result) => result.length > 0).length;
      }
      if (rows.length < PAGE) break;
      cursor = rows[rows.length - 1]!.row;
    }
  }
  if (report.moved > 0 || report.unreadable > 0 || report.unopenable > 0 || !report.complete) {
    svc.log.info("sealed values re-encrypted", { key_id: ring.current, ...report });
  }
  return report;
}
