import { and, asc, desc, eq, isNotNull, ne, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import type { DataCiteConfig } from "../../config";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { releases } from "../../db/schema";
import { audit } from "../../lib/audit";
import { OutboundError } from "../../lib/outbound";
import { ApiError } from "../../lib/problem";
import { conceptRecord, type DataCiteAttributes, versionRecord } from "../../lib/release/datacite";
import { conceptDoi as conceptDoiOf, versionDoi as versionDoiOf } from "../../lib/release/publication";
import { type DescriptionRow, describeStatement, describedRelease as r, toDescription } from "./descriptions";
import type { ReleaseMessage } from "./messages";

/**
 * DOIs of published releases through the DataCite REST API (decisions.md, "Publishing releases";
 * docs/releases.md, "Publishing"). Publication sets `doi_status` to `pending` when DataCite is
 * configured and queues a `release.doi` message; its consumer registers the version DOI
 * (`<prefix>/relab.<version>`, findable, with Metadata Schema 4 metadata) and creates or updates
 * the concept DOI (`<prefix>/relab.all`) to resolve to the newest release. A registration never
 * touches the release's files or its publication: failures leave it `pending` (retried by the
 * queue with growing delays) or end it `failed` with `doi_error`, which a superuser retries.
 */

export type DoiServices = Pick<Services, "db" | "log" | "config" | "outbound" | "bindings">;

/** Attempts of one registration before it ends `failed` (a superuser's retry starts again). */
export const MAX_DOI_ATTEMPTS = 6;

/** The delay before attempt `n + 1` after `n` failed: 1, 2, 4, 8, 16 minutes. */
export const doiRetryDelaySeconds = (attempts: number): number => Math.min(60 * 2 ** Math.max(0, attempts - 1), 3_600);

/** A pending registration without a live attempt and without change this long may be retried by a superuser (its message was lost). */
export const DOI_STALLED_AFTER_SECONDS = 2 * 3_600;

export type DoiOutcome =
  | { kind: "done"; status: "registered" | "failed" | "nothing" }
  | { kind: "retry"; delaySeconds: number }
  | { kind: "busy"; retryAfterSeconds: number };

/** A DataCite call that failed: `permanent` when trying again cannot help (a refusal, the DOI taken). */
export class DataCiteFailure extends Error {
  override name = "DataCiteFailure";
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** The version DOI and concept DOI a release gets under the configured prefix. */
export function doisOf(datacite: DataCiteConfig, version: string): { doi: string; conceptDoi: string } {
  return { doi: versionDoiOf(datacite.prefix, version), conceptDoi: conceptDoiOf(datacite.prefix) };
}

/** Queues the registration of a release's DOIs. Throws when the queue refuses the message. */
export async function queueDoiRegistration(svc: Pick<Services, "bindings">, version: string, delaySeconds = 0): Promise<void> {
  const body: ReleaseMessage = { type: "release.doi", version };
  await svc.bindings.RELEASE_QUEUE.send(body, { contentType: "json", ...(delaySeconds > 0 ? { delaySeconds } : {}) });
}

/** Ends a registration `failed` with `reason` (it stays retryable by a superuser). */
async function markDoiFailed(svc: Pick<Services, "db">, version: string, reason: string): Promise<void> {
  // Raw: compare-and-set; only a registration still pending ends failed.
  await svc.db.run(sql`UPDATE releases SET doi_status = 'failed', doi_error = ${reason.slice(0, 1000)}, doi_lease_until = NULL,
      doi_updated_at = unixepoch() WHERE version = ${version} AND status = 'published' AND doi_status = 'pending'`);
}

/**
 * After publication: queues the registration, or, should the queue refuse, ends it `failed` at
 * once (a superuser retries it) rather than leave it pending with nothing to move it.
 */
export async function startDoiRegistration(svc: Pick<Services, "db" | "log" | "bindings">, version: string): Promise<void> {
  try {
    await queueDoiRegistration(svc, version);
  } catch (error) {
    svc.log.error("the DOI registration could not be queued", { release: version, error });
    await markDoiFailed(svc, version, "The registration could not be queued; retry it.").catch((second: unknown) =>
      svc.log.error("a DOI registration that could not be queued could not be marked failed either", { release: version, error: second }),
    );
  }
}

function basicAuth(datacite: DataCiteConfig): string {
  const bytes = new TextEncoder().encode(`${datacite.repositoryId}:${datacite.password}`);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** DataCite's JSON:API error titles, for `doi_error` (never the request, which holds nothing secret but is long). */
async function errorTitles(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { errors?: { title?: unknown; source?: unknown }[] };
    const titles = (body.errors ?? [])
      .map((error) =>
        [typeof error.source === "string" ? `${error.source}: ` : "", typeof error.title === "string" ? error.title : ""].join(""),
      )
      .filter((title) => title !== "");
    return titles.length > 0 ? titles.join("; ").slice(0, 500) : "no error detail";
  } catch {
    return "no error detail";
  }
}

/** A client of the DataCite REST API's `/dois` for one repository. */
class DataCite {
  constructor(
    private readonly svc: DoiServices,
    private readonly config: DataCiteConfig,
  ) {}

  private async call(method: "GET" | "POST" | "PUT", path: string, body?: unknown): Promise<Response> {
    try {
      return await this.svc.outbound(
        `${this.config.apiUrl}${path}`,
        {
          method,
          headers: {
            Authorization: basicAuth(this.config),
            Accept: "application/vnd.api+json",
            ...(body === undefined ? {} : { "Content-Type": "application/vnd.api+json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        },
        { timeoutMs: this.config.timeoutMs },
      );
    } catch (error) {
      if (error instanceof OutboundError) {
        // A refused URL is a configuration mistake; a time-out or a network failure may pass.
        throw new DataCiteFailure(`DataCite ${method} ${path.split("/")[1]}: ${error.message}`, error.reason === "blocked");
      }
      throw error;
    }
  }

  /** A response that is not what was hoped for, as a failure: 5xx, 408 and 429 may pass; other refusals will not. */
  private async failure(response: Response, what: string): Promise<DataCiteFailure> {
    const transient = response.status >= 500 || response.status === 408 || response.status === 429;
    const detail = await errorTitles(response);
    const hint =
      response.status === 401 || response.status === 403 ? " (check DATACITE_REPOSITORY_ID, DATACITE_PASSWORD and DATACITE_PREFIX)" : "";
    return new DataCiteFailure(`DataCite answered ${response.status} to ${what}: ${detail}${hint}`, !transient);
  }

  /** The DOI's record as DataCite has it, or null when it does not exist. */
  async find(doi: string): Promise<{ url: string | null; state: string | null } | null> {
    const response = await this.call("GET", `/dois/${doi}`);
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (response.status !== 200) throw await this.failure(response, `the look-up of ${doi}`);
    const body = (await response.json().catch(() => null)) as { data?: { attributes?: { url?: unknown; state?: unknown } } } | null;
    const attributes = body?.data?.attributes;
    return {
      url: typeof attributes?.url === "string" ? attributes.url : null,
      state: typeof attributes?.state === "string" ? attributes.state : null,
    };
  }

  /**
   * Makes `record` the findable record of its DOI: created when DataCite has none, updated when
   * `ours` says the existing one is this service's (an earlier attempt's, whose answer was lost);
   * a DOI someone else holds is refused for good.
   */
  async publish(record: DataCiteAttributes & { doi: string }, ours: (existingUrl: string | null) => boolean): Promise<void> {
    const body = { data: { type: "dois", attributes: { ...record, event: "publish" } } };
    const existing = await this.find(record.doi);
    if (existing !== null && !ours(existing.url)) {
      throw new DataCiteFailure(
        `The DOI ${record.doi} is taken: DataCite has it for ${existing.url ?? "no URL"}. Free it or change DATACITE_PREFIX, then retry.`,
        true,
      );
    }
    const response =
      existing === null
        ? await this.call("POST", "/dois", body)
        : await this.call("PUT", `/dois/${record.doi}`, { data: { id: record.doi, ...body.data } });
    if (response.status === 200 || response.status === 201) {
      await response.body?.cancel();
      return;
    }
    throw await this.failure(response, `${existing === null ? "the registration" : "the update"} of ${record.doi}`);
  }
}

interface Claimed {
  attempts: number;
}

/**
 * Takes a pending registration for one attempt (a lease of `leaseSeconds` on D1's clock, the
 * attempt counted), in one round trip; or says why not.
 */
async function claim(svc: Pick<Services, "db">, version: string, leaseSeconds: number): Promise<Claimed | { busy: number } | null> {
  const [claimed, current] = await batchRows<[{ attempts: number }, { doi_status: string; remaining: number | null }]>(svc.db, [
    // Raw: compare-and-set on the registration's lease; the UPDATE's own condition decides who holds it.
    sql`UPDATE releases SET doi_attempts = doi_attempts + 1, doi_lease_until = unixepoch() + ${leaseSeconds}, doi_updated_at = unixepoch()
      WHERE version = ${version} AND status = 'published' AND doi_status = 'pending' AND coalesce(doi_lease_until, 0) < unixepoch()
      RETURNING doi_attempts AS attempts`,
    svc.db
      .select({ doi_status: releases.doi_status, remaining: sql<number | null>`${releases.doi_lease_until} - unixepoch()`.as("remaining") })
      .from(releases)
      .where(and(eq(releases.version, version), eq(releases.status, "published"))),
  ]);
  if (claimed[0]) return claimed[0];
  const found = current[0];
  if (found?.doi_status === "pending" && (found.remaining ?? 0) >= 0) return { busy: (found.remaining ?? 0) + 1 };
  return null;
}

/**
 * One attempt at a release's registration (the `release.doi` message). Never throws: a failure
 * that may pass is a `retry` (until MAX_DOI_ATTEMPTS), anything else ends the registration.
 */
export async function registerReleaseDoi(svc: DoiServices, version: string): Promise<DoiOutcome> {
  const datacite = svc.config.datacite;
  // Four calls at most, each bounded by the time-out, and a minute for the rest.
  const leaseSeconds = Math.ceil((4 * (datacite?.timeoutMs ?? 10_000)) / 1000) + 60;
  let claimed: Claimed | { busy: number } | null;
  try {
    claimed = await claim(svc, version, leaseSeconds);
  } catch (error) {
    svc.log.warn("the DOI registration could not be claimed", { release: version, error });
    return { kind: "retry", delaySeconds: 30 };
  }
  if (claimed === null) return { kind: "done", status: "nothing" };
  if ("busy" in claimed) return { kind: "busy", retryAfterSeconds: claimed.busy };
  if (datacite === null) {
    await markDoiFailed(
      svc,
      version,
      "DataCite is not configured (DATACITE_PREFIX, DATACITE_REPOSITORY_ID, DATACITE_PASSWORD); configure it and retry.",
    );
    return { kind: "done", status: "failed" };
  }
  const { doi, conceptDoi } = doisOf(datacite, version);
  let versionRegistered = false;
  try {
    const [rows, newestRows, registered] = await batchRows<[DescriptionRow, DescriptionRow, { doi: string }]>(svc.db, [
      describeStatement(and(eq(r.version, version), eq(r.status, "published"))!),
      describeStatement(eq(r.status, "published"), sql`${desc(r.created_at)}, ${desc(r.version)}`),
      svc.db
        .select({ doi: releases.doi })
        .from(releases)
        .where(and(eq(releases.status, "published"), isNotNull(releases.doi), ne(releases.version, version)))
        .orderBy(asc(releases.created_at), asc(releases.version)),
    ]);
    const release = rows[0] ? toDescription(rows[0], rows[0].base_url) : null;
    const newest = newestRows[0] ? toDescription(newestRows[0], newestRows[0].base_url) : null;
    if (!release || !newest) throw new Error(`release ${version} is not published`);
    const client = new DataCite(svc, datacite);
    const releasesUrl = release.catalogue.url;
    await client.publish({ ...versionRecord(release, doi, conceptDoi), doi }, (url) => url === release.url);
    versionRegistered = true;
    await client.publish(
      conceptRecord(newest, conceptDoi, [...registered.map((row) => row.doi), doi]),
      (url) => url !== null && url.startsWith(`${releasesUrl}/`),
    );
    // Raw: compare-and-set; only a registration still pending is marked registered.
    const done =
      await svc.db.all(sql`UPDATE releases SET doi_status = 'registered', doi = ${doi}, concept_doi = ${conceptDoi}, doi_error = NULL,
        doi_lease_until = NULL, doi_updated_at = unixepoch()
      WHERE version = ${version} AND status = 'published' AND doi_status = 'pending' RETURNING 1 AS done`);
    svc.log.info("release DOIs registered", { release: version, doi, concept_doi: conceptDoi, attempt: claimed.attempts });
    return { kind: "done", status: done.length > 0 ? "registered" : "nothing" };
  } catch (error) {
    const failure =
      error instanceof DataCiteFailure
        ? error
        : new DataCiteFailure(`The registration failed: ${(error as Error).message ?? String(error)}`, false);
    const last = failure.permanent || claimed.attempts >= MAX_DOI_ATTEMPTS;
    const reason =
      last && !failure.permanent ? `${failure.message} (attempt ${claimed.attempts} of ${MAX_DOI_ATTEMPTS}; retry it)` : failure.message;
    svc.log.warn("release DOI registration failed", { release: version, attempt: claimed.attempts, permanent: failure.permanent, reason });
    try {
      // Raw: compare-and-set on the pending registration, and the DOI kept only once DataCite has it (a CASE).
      await svc.db.run(sql`UPDATE releases SET doi_status = ${last ? "failed" : "pending"}, doi_error = ${reason.slice(0, 1000)},
          doi = CASE WHEN ${versionRegistered ? 1 : 0} = 1 THEN ${doi} ELSE doi END, doi_lease_until = NULL, doi_updated_at = unixepoch()
        WHERE version = ${version} AND status = 'published' AND doi_status = 'pending'`);
    } catch (second) {
      // The lease runs out and the queue's retry takes over.
      svc.log.error("a failed DOI registration could not be recorded", { release: version, error: second });
    }
    return last ? { kind: "done", status: "failed" } : { kind: "retry", delaySeconds: doiRetryDelaySeconds(claimed.attempts) };
  }
}

/**
 * A superuser's retry (`POST /v1/admin/releases/{version}/doi`): a `failed` registration, or a
 * `pending` one that has stalled (no live attempt, no change for DOI_STALLED_AFTER_SECONDS: its
 * message was lost), starts again from its first attempt. Compare-and-set: of two concurrent
 * retries one wins.
 */
export async function retryReleaseDoi(svc: DoiServices, actor: SessionUser, version: string): Promise<void> {
  if (svc.config.datacite === null) {
    throw new ApiError(409, {
      code: "DATACITE_NOT_CONFIGURED",
      detail: "DataCite is not configured (DATACITE_PREFIX, DATACITE_REPOSITORY_ID, DATACITE_PASSWORD): no DOI can be registered.",
    });
  }
  const [retried, current] = await batchRows<[{ version: string }, { status: string; doi_status: string }]>(svc.db, [
    // Raw: compare-and-set on the registration's state (failed, or pending and stalled).
    sql`UPDATE releases SET doi_status = 'pending', doi_attempts = 0, doi_error = NULL, doi_lease_until = NULL, doi_updated_at = unixepoch()
      WHERE version = ${version} AND status = 'published' AND (doi_status = 'failed' OR (doi_status = 'pending'
        AND coalesce(doi_lease_until, 0) < unixepoch() AND coalesce(doi_updated_at, 0) < unixepoch() - ${DOI_STALLED_AFTER_SECONDS}))
      RETURNING version`,
    svc.db.select({ status: releases.status, doi_status: releases.doi_status }).from(releases).where(eq(releases.version, version)),
  ]);
  if (!retried[0]) {
    const found = current[0];
    if (!found) throw new ApiError(404, { code: "NOT_FOUND", detail: "No release with this version exists." });
    if (found.status !== "published") {
      throw new ApiError(409, {
        code: "RELEASE_NOT_PUBLISHED",
        detail: `Release ${version} is not published; its DOI is registered once it is.`,
      });
    }
    const states: Record<string, [string, string]> = {
      registered: ["DOI_REGISTERED", "its DOIs are registered"],
      pending: ["DOI_PENDING", "its registration is under way (it is retried by itself)"],
      disabled: ["DOI_DISABLED", "it was published without DataCite configured and has no DOI"],
    };
    const [code, why] = states[found.doi_status] ?? ["DOI_PENDING", "its registration is under way"];
    throw new ApiError(409, { code, detail: `Release ${version}: ${why}; only a failed registration can be retried.` });
  }
  try {
    await queueDoiRegistration(svc, version);
  } catch (error) {
    svc.log.error("the DOI registration could not be queued", { release: version, error });
    await markDoiFailed(svc, version, "The retry could not be queued; retry again.").catch(() => undefined);
    throw new ApiError(503, {
      code: "RELEASE_QUEUE_UNAVAILABLE",
      detail: "The registration could not be queued; it stays failed. Try again shortly.",
      headers: { "Retry-After": "5" },
    });
  }
  audit(svc.log, "admin.release.doi_retried", { actor_id: actor.id, release: version });
}
