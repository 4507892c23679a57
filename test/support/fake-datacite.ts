// Fake DataCite REST API (the `/dois` resource), reached through fakeUpstream (Node side), written
// from DataCite's public documentation: JSON:API documents (`application/vnd.api+json`) with
// `data.type = "dois"` and Metadata Schema 4 attributes in camelCase; HTTP basic authentication
// with the repository id and password; `POST /dois` creates (with `event: "publish"` a findable
// DOI, without it a draft), `PUT /dois/{doi}` updates, `GET /dois/{doi}` reads (findable ones to
// anyone, drafts to their repository). Errors are JSON:API `errors` lists; an existing DOI is 422
// "This DOI has already been taken". It is stricter than DataCite in one way: an attribute name
// it does not know is refused, so a misspelt member fails a test instead of being dropped.
//
// Tests make it misbehave per DOI or per title: a title holding a marker of DATACITE_SWITCHES, or
// `PUT /__fake/dois/{doi}` with `{"mode": ...}` (a control only the tests use). `GET /__fake/log`
// lists the calls it answered. Web APIs only, and a type-only config import (see fake-oauth-provider.ts).

import type { OAuthReply, OAuthRequest } from "./fake-oauth-provider";
import type { DATACITE_SWITCHES, FAKE_DATACITE } from "./fake-upstream-config";

export type DataCiteFakeConfig = { datacite: typeof FAKE_DATACITE; switches: typeof DATACITE_SWITCHES };

export type DataCiteMode = "ok" | "down" | "slow" | "error" | "refuse";

interface StoredDoi {
  repository: string;
  state: "draft" | "findable";
  attributes: Record<string, unknown>;
  created: string;
  updated: string;
}

// Shared by every test file (one Node process): the DOIs are the tests' own (each file its versions).
const dois = new Map<string, StoredDoi>();
const modes = new Map<string, DataCiteMode>();
const log: { method: string; path: string; doi: string | null; status: number }[] = [];

const API_JSON = "application/vnd.api+json";
const reply = (status: number, value: unknown): OAuthReply => ({
  status,
  headers: { "content-type": API_JSON },
  body: JSON.stringify(value),
});
const errors = (status: number, list: { source?: string; title: string }[]) =>
  reply(status, { errors: list.map((error) => ({ status: String(status), ...error })) });

// Metadata Schema 4.5's controlled lists, as far as the service uses them (and a little beyond).
const RESOURCE_TYPES = new Set([
  "Audiovisual",
  "Book",
  "BookChapter",
  "Collection",
  "ComputationalNotebook",
  "ConferencePaper",
  "ConferenceProceeding",
  "DataPaper",
  "Dataset",
  "Dissertation",
  "Event",
  "Image",
  "Instrument",
  "InteractiveResource",
  "Journal",
  "JournalArticle",
  "Model",
  "OutputManagementPlan",
  "PeerReview",
  "PhysicalObject",
  "Preprint",
  "Report",
  "Service",
  "Software",
  "Sound",
  "Standard",
  "StudyRegistration",
  "Text",
  "Workflow",
  "Other",
]);
const RELATION_TYPES = new Set([
  "IsCitedBy",
  "Cites",
  "IsSupplementTo",
  "IsSupplementedBy",
  "IsContinuedBy",
  "Continues",
  "IsDescribedBy",
  "Describes",
  "HasMetadata",
  "IsMetadataFor",
  "HasVersion",
  "IsVersionOf",
  "IsNewVersionOf",
  "IsPreviousVersionOf",
  "IsPartOf",
  "HasPart",
  "IsPublishedIn",
  "IsReferencedBy",
  "References",
  "IsDocumentedBy",
  "Documents",
  "IsCompiledBy",
  "Compiles",
  "IsVariantFormOf",
  "IsOriginalFormOf",
  "IsIdenticalTo",
  "IsReviewedBy",
  "Reviews",
  "IsDerivedFrom",
  "IsSourceOf",
  "IsRequiredBy",
  "Requires",
  "IsObsoletedBy",
  "Obsoletes",
  "IsCollectedBy",
  "Collects",
  "IsTranslationOf",
  "HasTranslation",
]);
const IDENTIFIER_TYPES = new Set([
  "ARK",
  "arXiv",
  "bibcode",
  "CSTR",
  "DOI",
  "EAN13",
  "EISSN",
  "Handle",
  "IGSN",
  "ISBN",
  "ISSN",
  "ISTC",
  "LISSN",
  "LSID",
  "PMID",
  "PURL",
  "RRID",
  "UPC",
  "URL",
  "URN",
  "w3id",
]);
const CONTRIBUTOR_TYPES = new Set([
  "ContactPerson",
  "DataCollector",
  "DataCurator",
  "DataManager",
  "Distributor",
  "Editor",
  "HostingInstitution",
  "Producer",
  "ProjectLeader",
  "ProjectManager",
  "ProjectMember",
  "RegistrationAgency",
  "RegistrationAuthority",
  "RelatedPerson",
  "Researcher",
  "ResearchGroup",
  "RightsHolder",
  "Sponsor",
  "Supervisor",
  "Translator",
  "WorkPackageLeader",
  "Other",
]);
const DATE_TYPES = new Set([
  "Accepted",
  "Available",
  "Copyrighted",
  "Collected",
  "Coverage",
  "Created",
  "Issued",
  "Submitted",
  "Updated",
  "Valid",
  "Withdrawn",
  "Other",
]);
const DESCRIPTION_TYPES = new Set(["Abstract", "Methods", "SeriesInformation", "TableOfContents", "TechnicalInfo", "Other"]);
const NAME_TYPES = new Set(["Personal", "Organizational"]);
const ATTRIBUTES = new Set([
  "doi",
  "prefix",
  "suffix",
  "event",
  "url",
  "types",
  "titles",
  "creators",
  "publisher",
  "publicationYear",
  "subjects",
  "contributors",
  "dates",
  "language",
  "relatedIdentifiers",
  "relatedItems",
  "sizes",
  "formats",
  "version",
  "rightsList",
  "descriptions",
  "geoLocations",
  "fundingReferences",
  "schemaVersion",
  "identifiers",
  "alternateIdentifiers",
  "container",
  "xml",
]);

type Problem = { source: string; title: string };
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

function checkNameIdentifiers(where: string, value: unknown, problems: Problem[]): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) return void problems.push({ source: where, title: "must be a list" });
  for (const id of value) {
    if (!isObject(id) || !isText(id.nameIdentifier) || !isText(id.nameIdentifierScheme)) {
      problems.push({ source: where, title: "needs nameIdentifier and nameIdentifierScheme" });
    } else if (id.nameIdentifierScheme === "ORCID" && !/^https:\/\/orcid\.org\/\d{4}-\d{4}-\d{4}-\d{3}[\dX]$/.test(id.nameIdentifier)) {
      problems.push({ source: where, title: `ORCID ${id.nameIdentifier} is not an ORCID URL` });
    } else if (id.nameIdentifierScheme === "ROR" && !/^https:\/\/ror\.org\/0[0-9a-z]{8}$/.test(id.nameIdentifier)) {
      problems.push({ source: where, title: `ROR ${id.nameIdentifier} is not a ROR URL` });
    }
  }
}

/** What is wrong with a `dois` document's attributes for the state they ask for; an empty list if nothing. */
function validate(attributes: Record<string, unknown>, findable: boolean): Problem[] {
  const problems: Problem[] = [];
  for (const name of Object.keys(attributes))
    if (!ATTRIBUTES.has(name)) problems.push({ source: name, title: "is not a DataCite attribute" });
  const a = attributes;
  if (a.event !== undefined && !["publish", "register", "hide"].includes(a.event as string))
    problems.push({ source: "event", title: "is not publish, register or hide" });
  if (a.url !== undefined && (typeof a.url !== "string" || !/^https?:\/\/\S+$/.test(a.url)))
    problems.push({ source: "url", title: "is not an http(s) URL" });
  if (a.titles !== undefined && (!Array.isArray(a.titles) || a.titles.some((t) => !isObject(t) || !isText(t.title)))) {
    problems.push({ source: "titles", title: "must be a list of {title}" });
  }
  if (a.creators !== undefined) {
    if (!Array.isArray(a.creators)) problems.push({ source: "creators", title: "must be a list" });
    else
      a.creators.forEach((creator, i) => {
        if (!isObject(creator) || !isText(creator.name)) problems.push({ source: `creators/${i}`, title: "needs a name" });
        else if (creator.nameType !== undefined && !NAME_TYPES.has(creator.nameType as string))
          problems.push({ source: `creators/${i}`, title: "bad nameType" });
        else checkNameIdentifiers(`creators/${i}/nameIdentifiers`, creator.nameIdentifiers, problems);
      });
  }
  if (a.contributors !== undefined) {
    if (!Array.isArray(a.contributors)) problems.push({ source: "contributors", title: "must be a list" });
    else
      a.contributors.forEach((contributor, i) => {
        if (!isObject(contributor) || !isText(contributor.name) || !CONTRIBUTOR_TYPES.has(contributor.contributorType as string)) {
          problems.push({ source: `contributors/${i}`, title: "needs a name and a contributorType of the controlled list" });
        } else checkNameIdentifiers(`contributors/${i}/nameIdentifiers`, contributor.nameIdentifiers, problems);
      });
  }
  if (a.publisher !== undefined && !isText(a.publisher) && !(isObject(a.publisher) && isText(a.publisher.name))) {
    problems.push({ source: "publisher", title: "must be a name" });
  }
  if (a.publicationYear !== undefined && !/^\d{4}$/.test(String(a.publicationYear)))
    problems.push({ source: "publicationYear", title: "must be a year" });
  if (a.types !== undefined && (!isObject(a.types) || !RESOURCE_TYPES.has(a.types.resourceTypeGeneral as string))) {
    problems.push({ source: "types", title: "resourceTypeGeneral is not of the controlled list" });
  }
  if (a.relatedIdentifiers !== undefined) {
    if (!Array.isArray(a.relatedIdentifiers)) problems.push({ source: "relatedIdentifiers", title: "must be a list" });
    else
      a.relatedIdentifiers.forEach((related, i) => {
        if (
          !isObject(related) ||
          !isText(related.relatedIdentifier) ||
          !IDENTIFIER_TYPES.has(related.relatedIdentifierType as string) ||
          !RELATION_TYPES.has(related.relationType as string)
        ) {
          problems.push({
            source: `relatedIdentifiers/${i}`,
            title: "needs relatedIdentifier, relatedIdentifierType and relationType of the controlled lists",
          });
        } else if (related.relatedIdentifierType === "DOI" && !/^10\.\d{4,9}\/\S+$/.test(related.relatedIdentifier)) {
          problems.push({ source: `relatedIdentifiers/${i}`, title: "is not a DOI" });
        }
      });
  }
  if (
    a.dates !== undefined &&
    (!Array.isArray(a.dates) || a.dates.some((d) => !isObject(d) || !isText(d.date) || !DATE_TYPES.has(d.dateType as string)))
  ) {
    problems.push({ source: "dates", title: "must be a list of {date, dateType}" });
  }
  if (
    a.descriptions !== undefined &&
    (!Array.isArray(a.descriptions) ||
      a.descriptions.some((d) => !isObject(d) || !isText(d.description) || !DESCRIPTION_TYPES.has(d.descriptionType as string)))
  ) {
    problems.push({ source: "descriptions", title: "must be a list of {description, descriptionType}" });
  }
  if (a.rightsList !== undefined && (!Array.isArray(a.rightsList) || a.rightsList.some((r) => !isObject(r) || !isText(r.rights)))) {
    problems.push({ source: "rightsList", title: "must be a list of {rights}" });
  }
  if (a.subjects !== undefined && (!Array.isArray(a.subjects) || a.subjects.some((s) => !isObject(s) || !isText(s.subject)))) {
    problems.push({ source: "subjects", title: "must be a list of {subject}" });
  }
  for (const name of ["sizes", "formats"] as const) {
    if (a[name] !== undefined && (!Array.isArray(a[name]) || (a[name] as unknown[]).some((item) => !isText(item))))
      problems.push({ source: name, title: "must be a list of strings" });
  }
  if (a.version !== undefined && !isText(a.version)) problems.push({ source: "version", title: "must be a string" });
  if (findable) {
    // What a findable DOI must have (Metadata Schema 4's mandatory properties, and its URL).
    if (a.url === undefined) problems.push({ source: "url", title: "can't be blank" });
    if (!Array.isArray(a.titles) || a.titles.length === 0) problems.push({ source: "titles", title: "can't be blank" });
    if (!Array.isArray(a.creators) || a.creators.length === 0) problems.push({ source: "creators", title: "can't be blank" });
    if (a.publisher === undefined) problems.push({ source: "publisher", title: "can't be blank" });
    if (a.publicationYear === undefined) problems.push({ source: "publicationYear", title: "can't be blank" });
    if (!isObject(a.types)) problems.push({ source: "types", title: "can't be blank" });
  }
  return problems;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The failure this call is to have: by the DOI's mode, else by a marker in the document's title. */
function modeFor(doi: string | null, attributes: Record<string, unknown> | null, config: DataCiteFakeConfig): DataCiteMode {
  const set = doi === null ? undefined : modes.get(doi);
  if (set) return set;
  const titles = Array.isArray(attributes?.titles) ? (attributes.titles as { title?: unknown }[]) : [];
  const title = titles.map((t) => String(t.title ?? "")).join(" ");
  for (const [mode, marker] of Object.entries(config.switches)) if (title.includes(marker)) return mode as DataCiteMode;
  return "ok";
}

/** Answers a request for the fake DataCite API's host, or null when it is not one. */
export async function fakeDataCite(request: OAuthRequest, config: DataCiteFakeConfig): Promise<OAuthReply | null> {
  const url = new URL(request.url);
  const base = new URL(config.datacite.apiUrl);
  if (url.host !== base.host) return null;
  const path = url.pathname;

  // The tests' controls.
  if (path === "/__fake/log" && request.method === "GET") return reply(200, log);
  const control = /^\/__fake\/dois\/(.+)$/.exec(path);
  if (control && request.method === "PUT") {
    const { mode } = JSON.parse(await request.text()) as { mode: DataCiteMode };
    modes.set(decodeURIComponent(control[1]!).toLowerCase(), mode);
    return { status: 204, headers: {}, body: null };
  }

  const authorised =
    request.headers.get("authorization") === `Basic ${btoa(`${config.datacite.repositoryId}:${config.datacite.password}`)}`;
  const one = /^\/dois\/(.+)$/.exec(path);
  const doi = one ? decodeURIComponent(one[1]!).toLowerCase() : null;
  const record = (status: number, stored: StoredDoi, id: string) =>
    reply(status, {
      data: {
        id,
        type: "dois",
        attributes: { ...stored.attributes, doi: id, state: stored.state, created: stored.created, updated: stored.updated },
      },
    });
  const logged = (answer: OAuthReply) => {
    log.push({ method: request.method, path, doi, status: answer.status });
    return answer;
  };

  if (request.method === "GET" && doi !== null) {
    const stored = dois.get(doi);
    const mode = modeFor(doi, stored?.attributes ?? null, config);
    if (mode === "down") return logged(errors(503, [{ title: "Service unavailable" }]));
    if (mode === "slow") await sleep(3_000);
    if (!stored || (stored.state === "draft" && (!authorised || stored.repository !== config.datacite.repositoryId))) {
      return logged(errors(404, [{ title: "The resource you are looking for doesn't exist." }]));
    }
    return logged(record(200, stored, doi));
  }

  if ((request.method === "POST" && path === "/dois") || (request.method === "PUT" && doi !== null)) {
    if (!authorised) return logged(errors(401, [{ title: "Bad credentials." }]));
    if (!request.headers.get("content-type")?.startsWith(API_JSON))
      return logged(errors(415, [{ title: `The content type must be ${API_JSON}.` }]));
    let document: unknown;
    try {
      document = JSON.parse(await request.text());
    } catch {
      return logged(errors(400, [{ title: "The request body is not JSON." }]));
    }
    const data = isObject(document) && isObject(document.data) ? document.data : null;
    if (data?.type !== "dois" || !isObject(data.attributes)) {
      return logged(errors(422, [{ source: "data", title: 'must be a JSON:API resource of type "dois" with attributes' }]));
    }
    const attributes = data.attributes;
    const target = (doi ?? (typeof attributes.doi === "string" ? attributes.doi : "")).toLowerCase();
    const mode = modeFor(target || null, attributes, config);
    if (mode === "down") return logged(errors(503, [{ title: "Service unavailable" }]));
    if (mode === "error") return logged(errors(500, [{ title: "Internal server error" }]));
    if (mode === "slow") await sleep(3_000);
    if (mode === "refuse")
      return logged(errors(422, [{ source: "xml", title: "DOI metadata is not valid (the test asked for a refusal)" }]));
    if (!/^10\.\d{4,9}\/\S+$/.test(target)) return logged(errors(422, [{ source: "doi", title: "is not a DOI" }]));
    if (!target.startsWith(`${config.datacite.prefix}/`))
      return logged(errors(403, [{ source: "doi", title: "The prefix is not one of this repository's." }]));
    if (doi !== null && typeof attributes.doi === "string" && attributes.doi.toLowerCase() !== doi) {
      return logged(errors(422, [{ source: "doi", title: "does not match the DOI of the URL" }]));
    }
    const existing = dois.get(target);
    if (request.method === "POST" && existing) return logged(errors(422, [{ source: "doi", title: "This DOI has already been taken" }]));
    if (request.method === "PUT" && !existing) return logged(errors(404, [{ title: "The resource you are looking for doesn't exist." }]));
    if (existing && existing.repository !== config.datacite.repositoryId)
      return logged(errors(403, [{ title: "You are not authorized to access this resource." }]));
    const findable = attributes.event === "publish" || existing?.state === "findable";
    const merged = { ...(existing?.attributes ?? {}), ...attributes };
    const problems = validate(merged, findable);
    if (problems.length > 0) return logged(errors(422, problems));
    const { event: _event, ...kept } = merged;
    const now = new Date().toISOString();
    const stored: StoredDoi = {
      repository: config.datacite.repositoryId,
      state: findable ? "findable" : "draft",
      attributes: kept,
      created: existing?.created ?? now,
      updated: now,
    };
    dois.set(target, stored);
    return logged(record(existing ? 200 : 201, stored, target));
  }
  return logged(errors(404, [{ title: "The resource you are looking for doesn't exist." }]));
}
