import { type SQL, sql } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import { hasAdminPowers } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import { negotiateRelease, type ReleaseMediaType } from "../../lib/negotiation";

// What the cached public reads (docs/storage.md "Cached reads") need of the database and of the
// viewer: the validator statement of each kind of read, and the viewer classes whose answers are
// identical, so one cached copy may serve a whole class and never another.

/**
 * What a cached read shows, and so what validates it: `record` (a product or component detail,
 * its tree or its component pages: the generation of its base product, of the reference
 * names and of the owners' names), `catalogue` (lists and facets: the catalogue's generation), `shared` (the same answer
 * for every viewer, signed in or not: suggestions), `release` (a release in any of its
 * representations: the releases' generation).
 */
export type ReadScope = "record" | "catalogue" | "shared" | "release";

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
 * `generation` (text), or no row when the record does not exist. `recordId` for `record`: its
 * tree's generation, the reference names' and the owners' names' (renewed by any rename or change
 * of profile visibility, migration 0026).
 */
export function validatorStatement(scope: ReadScope, recordId: number | null): SQL {
  // Raw: one row of text built from three generations; it runs on every cached read, so it stays this small.
  if (scope === "record") {
    return sql`SELECT coalesce(g.generation, 0) || '.' || r.generation || '.' || o.generation AS generation
      FROM products p LEFT JOIN tree_generations g ON g.root_id = p.root_id
      JOIN read_generations r ON r.name = 'reference' JOIN read_generations o ON o.name = 'owners'
      WHERE p.id = ${recordId ?? 0}`;
  }
  if (scope === "release") return sql`SELECT CAST(generation AS TEXT) AS generation FROM read_generations WHERE name = 'releases'`;
  return sql`SELECT CAST(generation AS TEXT) AS generation FROM read_generations WHERE name = 'catalogue'`;
}

// The short names of the representations in cache keys; JSON, the default, has none (its keys are as before).
const VARIANTS: Readonly<Record<ReleaseMediaType, string>> = {
  "application/json": "",
  "text/html": "html",
  "application/ld+json": "jsonld",
  "application/vnd.datacite.datacite+json": "datacite",
  "application/vnd.citationstyles.csl+json": "csl",
  "application/x-bibtex": "bibtex",
  "application/x-research-info-systems": "ris",
  "text/x-bibliography": "bibliography",
};

// Accept headers seen lately and the variant each asks for: a browser sends the same few values
// again and again, and every cached read asks. Bounded, as the values come from anyone.
const variants = new LRUCache<string, string | typeof NONE>({ max: 512 });
const NONE = Symbol("none");

/**
 * The representation a request's `Accept` header selects, as part of a cached read's key, so
 * one representation is never served for another (decisions.md, "Publishing releases"): "" for
 * JSON (and for no header); null when the header accepts none of them, a read that is not served
 * from or stored in the cache. The releases' negotiation decides it for every cached read: a read
 * that offers JSON only answers alike for every variant, which then simply has its own copy.
 */
export function readVariant(accept: string | null | undefined): string | null {
  if (accept === null || accept === undefined || accept === "" || accept === "*/*" || accept === "application/json") return "";
  if (accept.length > 1024) {
    const type = negotiateRelease(accept);
    return type === null ? null : VARIANTS[type];
  }
  let known = variants.get(accept);
  if (known === undefined) {
    const type = negotiateRelease(accept);
    known = type === null ? NONE : VARIANTS[type];
    variants.set(accept, known);
  }
  return known === NONE ? null : known;
}

/** The generation a validator's rows report, or null (no such record: nothing to cache). */
export function generationFrom(rows: readonly unknown[]): string | null {
  const row = rows[0] as { generation: string | number | null } | undefined;
  return row?.generation === undefined || row.generation === null ? null : String(row.generation);
}
