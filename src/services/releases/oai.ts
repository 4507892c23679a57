import { and, asc, count, eq, gt, gte, isNotNull, lte, min, or, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { releases } from "../../db/schema";
import {
  decodeResumptionToken,
  encodeResumptionToken,
  type ListPosition,
  type OaiBody,
  type OaiError,
  type OaiHeader,
  type OaiRecord,
  type OaiRequest,
  oaiResponse,
  parseOaiRequest,
  type ResumptionElement,
} from "../../lib/oai-pmh";
import { OAI_DATACITE, OAI_DC, oaiDataCite, oaiDublinCore } from "../../lib/release/oai-records";
import type { ReleaseDescription } from "../../lib/release/publication";
import { type DescriptionRow, describedRelease, describeStatement, toDescription } from "./descriptions";

/**
 * The OAI-PMH 2.0 repository of published releases at `/v1/oai` (decisions.md, "Publishing
 * releases"): item identifiers `oai:<host>:release/<version>`, datestamps the publication time
 * (seconds, UTC), formats `oai_dc` and `oai_datacite` (the latter for releases with a registered
 * DOI: DataCite's schema requires one), no sets, lists of 100 with resumption tokens valid 24 hours.
 * Releases are never deleted (`deletedRecord` "no"). Every request is one D1 round trip.
 */

export type OaiServices = Pick<Services, "db" | "config" | "clock">;

export const OAI_PAGE_SIZE = 100;
export const RESUMPTION_TOKEN_SECONDS = 24 * 3600;

/** The scheme's repository identifier must be a domain name; other hosts (localhost, an address) get no `oai-identifier` description. */
const DOMAIN_NAME = /^[a-zA-Z][a-zA-Z0-9-]*(\.[a-zA-Z][a-zA-Z0-9-]*)+$/;

const FORMATS = [OAI_DC, OAI_DATACITE];

interface Repository {
  /** `https://api.example.org/v1/oai`: the base URL every response echoes. */
  baseUrl: string;
  /** The API's host name: the repository identifier. */
  host: string;
  now: number;
}

const itemIdentifier = (repository: Repository, version: string) => `oai:${repository.host}:release/${version}`;

/** The version an item identifier names in this repository, or null. */
function versionOf(repository: Repository, identifier: string): string | null {
  const prefix = `oai:${repository.host}:release/`;
  if (!identifier.startsWith(prefix)) return null;
  const version = identifier.slice(prefix.length);
  return /^[0-9][0-9A-Za-z.-]{0,31}$/.test(version) ? version : null;
}

const error = (code: OaiError["code"], message: string) => ({ errors: [{ code, message }] });

/** A described release's metadata in a format (the caller has checked it can be disseminated). */
function metadata(svc: OaiServices, release: ReleaseDescription, prefix: string): string {
  if (prefix === OAI_DC.prefix) return oaiDublinCore(release);
  return oaiDataCite(release as ReleaseDescription & { doi: string }, svc.config.datacite?.repositoryId ?? release.publisher);
}

const r = describedRelease;

/** The selection of a list: published releases in the time range, with a DOI for `oai_datacite`. */
function selection(prefix: string, from: number | null, until: number | null): SQL {
  return and(
    eq(r.status, "published"),
    from === null ? undefined : gte(r.published_at, from),
    until === null ? undefined : lte(r.published_at, until),
    prefix === OAI_DATACITE.prefix ? isNotNull(r.doi) : undefined,
  )!;
}

async function identify(svc: OaiServices, repository: Repository): Promise<OaiBody> {
  const [rows] = await batchRows<[{ earliest: number | null }]>(svc.db, [
    svc.db
      .select({ earliest: min(releases.published_at).as("earliest") })
      .from(releases)
      .where(eq(releases.status, "published")),
  ]);
  return {
    verb: "Identify",
    repositoryName: `${svc.config.releaseAuthorship.publisher} dataset releases`,
    baseUrl: repository.baseUrl,
    adminEmails: [svc.config.oaiAdminEmail],
    // The lower bound of every datestamp: the first publication, or now while there is none.
    earliestDatestamp: rows[0]?.earliest ?? repository.now,
    repositoryIdentifier: DOMAIN_NAME.test(repository.host) ? repository.host : null,
    sampleIdentifier: itemIdentifier(repository, "2026.1"),
  };
}

async function listMetadataFormats(
  svc: OaiServices,
  repository: Repository,
  identifier: string | null,
): Promise<OaiBody | { errors: OaiError[] }> {
  if (identifier === null) return { verb: "ListMetadataFormats", formats: FORMATS };
  const version = versionOf(repository, identifier);
  if (version === null) return error("idDoesNotExist", `${identifier} is not an item of this repository.`);
  const [rows] = await batchRows<[{ doi: string | null }]>(svc.db, [
    svc.db
      .select({ doi: releases.doi })
      .from(releases)
      .where(and(eq(releases.version, version), eq(releases.status, "published"))),
  ]);
  const found = rows[0];
  if (!found) return error("idDoesNotExist", `${identifier} is not an item of this repository.`);
  return { verb: "ListMetadataFormats", formats: found.doi === null ? [OAI_DC] : FORMATS };
}

async function getRecord(
  svc: OaiServices,
  repository: Repository,
  identifier: string,
  prefix: string,
): Promise<OaiBody | { errors: OaiError[] }> {
  if (!FORMATS.some((format) => format.prefix === prefix))
    return error("cannotDisseminateFormat", `This repository has no format "${prefix}".`);
  const version = versionOf(repository, identifier);
  if (version === null) return error("idDoesNotExist", `${identifier} is not an item of this repository.`);
  const [rows] = await batchRows<[DescriptionRow]>(svc.db, [describeStatement(and(eq(r.version, version), eq(r.status, "published"))!)]);
  const row = rows[0];
  const release = row ? toDescription(row, row.base_url) : null;
  if (!row || !release || row.published_at === null) return error("idDoesNotExist", `${identifier} is not an item of this repository.`);
  if (prefix === OAI_DATACITE.prefix && release.doi === null) {
    return error("cannotDisseminateFormat", `${identifier} has no registered DOI, which oai_datacite requires; it is available as oai_dc.`);
  }
  return {
    verb: "GetRecord",
    record: {
      header: { identifier: itemIdentifier(repository, release.version), datestamp: row.published_at },
      metadata: metadata(svc, release, prefix),
    },
  };
}

type ListRequest = Extract<OaiRequest, { verb: "ListIdentifiers" | "ListRecords" }>;

async function list(svc: OaiServices, repository: Repository, request: ListRequest): Promise<OaiBody | { errors: OaiError[] }> {
  let position: Omit<ListPosition, "after" | "cursor" | "completeListSize" | "expiresAt"> & {
    after: ListPosition["after"] | null;
    cursor: number;
    completeListSize: number | null;
  };
  if ("resumptionToken" in request) {
    const decoded = decodeResumptionToken(request.resumptionToken, repository.now);
    if ("code" in decoded) return { errors: [decoded] };
    position = decoded;
  } else {
    if (request.set !== null) return error("noSetHierarchy", "This repository has no sets.");
    const until = request.until === null ? null : request.until.seconds + (request.until.day ? 86_399 : 0);
    position = {
      metadataPrefix: request.metadataPrefix,
      from: request.from?.seconds ?? null,
      until,
      after: null,
      cursor: 0,
      completeListSize: null,
    };
  }
  const prefix = position.metadataPrefix;
  if (!FORMATS.some((format) => format.prefix === prefix))
    return error("cannotDisseminateFormat", `This repository has no format "${prefix}".`);
  const where = selection(prefix, position.from, position.until);
  const after =
    position.after === null
      ? undefined
      : or(
          gt(r.published_at, position.after.seconds),
          and(eq(r.published_at, position.after.seconds), gt(r.version, position.after.version)),
        );
  const pageWhere = and(where, after)!;
  const order = [asc(r.published_at), asc(r.version)];
  const page =
    request.verb === "ListRecords"
      ? describeStatement(pageWhere, sql.join(order, sql`, `), OAI_PAGE_SIZE + 1)
      : svc.db
          .select({ version: r.version, published_at: r.published_at })
          .from(r)
          .where(pageWhere)
          .orderBy(...order)
          .limit(OAI_PAGE_SIZE + 1);
  const statements: SQLWrapper[] = [page];
  if (position.completeListSize === null) {
    statements.push(
      svc.db
        .select({ total: count().as("total") })
        .from(r)
        .where(where),
    );
  }
  const [rows, counted] = await batchRows<[DescriptionRow, { total: number }]>(svc.db, statements as [SQLWrapper, SQLWrapper]);
  const total = position.completeListSize ?? counted?.[0]?.total ?? 0;
  if (rows.length === 0) {
    return position.after === null
      ? error("noRecordsMatch", "No release matches these arguments.")
      : error("badResumptionToken", "The list this resumption token continues has no more items; start it again.");
  }
  const shown = rows.slice(0, OAI_PAGE_SIZE);
  const more = rows.length > OAI_PAGE_SIZE;
  const last = shown[shown.length - 1]!;
  let token: ResumptionElement | null = null;
  if (more) {
    const expiresAt = repository.now + RESUMPTION_TOKEN_SECONDS;
    const next: ListPosition = {
      metadataPrefix: prefix,
      from: position.from,
      until: position.until,
      after: { seconds: last.published_at!, version: last.version },
      cursor: position.cursor + shown.length,
      completeListSize: total,
      expiresAt,
    };
    token = { token: encodeResumptionToken(next), expiresAt, completeListSize: total, cursor: position.cursor };
  } else if (position.after !== null) {
    // The last page of a list that took several: an empty token says so.
    token = { token: "", expiresAt: null, completeListSize: total, cursor: position.cursor };
  }
  const header = (row: { version: string; published_at: number | null }): OaiHeader => ({
    identifier: itemIdentifier(repository, row.version),
    datestamp: row.published_at!,
  });
  if (request.verb === "ListIdentifiers") return { verb: "ListIdentifiers", headers: shown.map(header), token };
  const records: OaiRecord[] = shown.map((row) => ({
    header: header(row),
    metadata: metadata(svc, toDescription(row, row.base_url)!, prefix),
  }));
  return { verb: "ListRecords", records, token };
}

/**
 * Answers one OAI-PMH request, given its arguments (query or form pairs, in order, decoded) and
 * the API's origin; the response document is always a 200 (the protocol's errors are inside it).
 */
export async function answerOai(svc: OaiServices, pairs: readonly (readonly [string, string])[], origin: string): Promise<string> {
  const repository: Repository = { baseUrl: `${origin}/v1/oai`, host: new URL(origin).hostname, now: Math.floor(svc.clock.now() / 1000) };
  const parsed = parseOaiRequest(pairs);
  if (!parsed.ok)
    return oaiResponse({ responseDate: repository.now, baseUrl: repository.baseUrl, echo: null, answer: { errors: parsed.errors } });
  const { request } = parsed;
  let answer: OaiBody | { errors: OaiError[] };
  switch (request.verb) {
    case "Identify":
      answer = await identify(svc, repository);
      break;
    case "ListMetadataFormats":
      answer = await listMetadataFormats(svc, repository, request.identifier);
      break;
    case "ListSets":
      answer =
        request.resumptionToken === null
          ? error("noSetHierarchy", "This repository has no sets.")
          : error("badResumptionToken", "This repository has no sets, and so no list of them to resume.");
      break;
    case "GetRecord":
      answer = await getRecord(svc, repository, request.identifier, request.metadataPrefix);
      break;
    default:
      answer = await list(svc, repository, request);
  }
  return oaiResponse({ responseDate: repository.now, baseUrl: repository.baseUrl, echo: parsed.echo, answer });
}
