import { type SQL, sql } from "drizzle-orm";
import { hasAdminPowers } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";

// What the cached public reads (docs/storage.md "Cached reads") need of the database and of the
// viewer: the validator statement of each kind of read, and the viewer classes whose answers are
// identical, so one cached copy may serve a whole class and never another.

/**
 * What a cached read shows, and so what validates it: `record` (a product or component detail,
 * its tree or its component pages: the generation of its base product and of the reference
 * names), `catalogue` (lists and facets: the catalogue's generation), `shared` (the same answer
 * for every viewer, signed in or not: suggestions).
 */
export type ReadScope = "record" | "catalogue" | "shared";

/**
 * Who a cached answer was computed for. `anonymous`: no valid access token; all anonymous
 * viewers see the same. `user:<id>`: a signed-in account, alone in its class, since what it sees
 * depends on who it is (its own private name and unsettled media, community names, and for a
 * superuser with TOTP, every owner and every record's unsettled media). `everyone`: reads that do
 * not depend on the viewer at all (suggestions).
 */
export type ViewerClass = "anonymous" | `user:${number}` | "everyone";

/** The class of `viewer` for a read of `scope`. */
export function viewerClass(scope: ReadScope, viewer: SessionUser | null): ViewerClass {
  if (scope === "shared") return "everyone";
  return viewer ? `user:${viewer.id}` : "anonymous";
}

/**
 * What a copy depends on besides its class and the generations: whether its viewer held a
 * superuser's powers (`hasAdminPowers`: every owner's name, every record's unsettled media). They
 * come and go with TOTP enrolment, which moves no generation, so a copy records them and is
 * served only to a viewer who holds the same. Empty for `shared` reads, which show everyone the same.
 */
export function viewerPowers(scope: ReadScope, viewer: SessionUser | null): "" | "admin" {
  return scope !== "shared" && hasAdminPowers(viewer) ? "admin" : "";
}

/**
 * The class a request is in if its token (for `userId`, if any) checks out: known before the
 * check, so the cache is looked up while the check travels. A token found revoked reads as
 * anonymous and finds no copy of its own class: it reads afresh.
 */
export function expectedClass(scope: ReadScope, userId: number | null): ViewerClass {
  if (scope === "shared") return "everyone";
  return userId === null ? "anonymous" : `user:${userId}`;
}

/**
 * The one small indexed read that says whether a cached answer is current: one row with
 * `generation` (text), or no row when the record does not exist. `recordId` for `record`.
 */
export function validatorStatement(scope: ReadScope, recordId: number | null): SQL {
  if (scope === "record") {
    return sql`SELECT coalesce(g.generation, 0) || '.' || r.generation AS generation
      FROM products p LEFT JOIN tree_generations g ON g.root_id = p.root_id
      JOIN read_generations r ON r.name = 'reference'
      WHERE p.id = ${recordId ?? 0}`;
  }
  return sql`SELECT CAST(generation AS TEXT) AS generation FROM read_generations WHERE name = 'catalogue'`;
}

/** The generation a validator's rows report, or null (no such record: nothing to cache). */
export function generationFrom(rows: readonly unknown[]): string | null {
  const row = rows[0] as { generation: string | number | null } | undefined;
  return row?.generation === undefined || row.generation === null ? null : String(row.generation);
}
