import { fromBase64Url, toBase64Url } from "./encoding";
import { element, textElement } from "./xml";

/**
 * The Open Archives Initiative Protocol for Metadata Harvesting 2.0, its protocol side: reading a
 * request's arguments (with every error condition the specification names), resumption tokens,
 * and writing the response document. What the repository holds (the releases) and their
 * metadata records are the caller's (src/services/releases/oai.ts).
 */

export const OAI_NAMESPACE = "http://www.openarchives.org/OAI/2.0/";
const OAI_SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd";
export const XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance";

export const OAI_VERBS = ["Identify", "ListMetadataFormats", "ListSets", "ListIdentifiers", "ListRecords", "GetRecord"] as const;
export type OaiVerb = (typeof OAI_VERBS)[number];

export type OaiErrorCode =
  | "badArgument"
  | "badResumptionToken"
  | "badVerb"
  | "cannotDisseminateFormat"
  | "idDoesNotExist"
  | "noRecordsMatch"
  | "noMetadataFormats"
  | "noSetHierarchy";

export interface OaiError {
  code: OaiErrorCode;
  message: string;
}

/** A time as the protocol has it: the instant, and whether it was given as a day (`YYYY-MM-DD`). */
export interface OaiTime {
  seconds: number;
  day: boolean;
}

export type OaiRequest =
  | { verb: "Identify" }
  | { verb: "ListMetadataFormats"; identifier: string | null }
  | { verb: "ListSets"; resumptionToken: string | null }
  | { verb: "ListIdentifiers" | "ListRecords"; metadataPrefix: string; from: OaiTime | null; until: OaiTime | null; set: string | null }
  | { verb: "ListIdentifiers" | "ListRecords"; resumptionToken: string }
  | { verb: "GetRecord"; identifier: string; metadataPrefix: string };

/** A parsed request, with the arguments to echo in `<request>`; or the errors that answer it (echoing none). */
export type ParsedOaiRequest = { ok: true; request: OaiRequest; echo: Record<string, string> } | { ok: false; errors: OaiError[] };

const ARGUMENTS: Readonly<Record<OaiVerb, { required: readonly string[]; optional: readonly string[]; exclusive: boolean }>> = {
  Identify: { required: [], optional: [], exclusive: false },
  ListMetadataFormats: { required: [], optional: ["identifier"], exclusive: false },
  ListSets: { required: [], optional: [], exclusive: true },
  ListIdentifiers: { required: ["metadataPrefix"], optional: ["from", "until", "set"], exclusive: true },
  ListRecords: { required: ["metadataPrefix"], optional: ["from", "until", "set"], exclusive: true },
  GetRecord: { required: ["identifier", "metadataPrefix"], optional: [], exclusive: false },
};

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const SECOND = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

/** A `from`/`until` value in either granularity the repository supports; null when it is not one. */
export function parseOaiTime(value: string): OaiTime | null {
  const match = DAY.exec(value) ?? SECOND.exec(value);
  if (!match) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1).map(Number) as number[];
  const ms = Date.UTC(year!, month! - 1, day!, hour, minute, second);
  const back = new Date(ms);
  // Refuses 2026-02-30 and 25:00:00, which Date.UTC would roll over.
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month! - 1 || back.getUTCDate() !== day || back.getUTCHours() !== hour)
    return null;
  if (back.getUTCMinutes() !== minute || back.getUTCSeconds() !== second) return null;
  return { seconds: ms / 1000, day: match.length === 4 };
}

/**
 * Reads the arguments of a request (query or form pairs, in order). Repeated, unknown, missing or
 * malformed arguments are `badArgument`; a missing, repeated or unknown verb `badVerb`; an exclusive
 * `resumptionToken` with any other argument `badArgument`.
 */
export function parseOaiRequest(pairs: readonly (readonly [string, string])[]): ParsedOaiRequest {
  const verbs = pairs.filter(([name]) => name === "verb").map(([, value]) => value);
  if (verbs.length === 0) return { ok: false, errors: [{ code: "badVerb", message: "The verb argument is missing." }] };
  if (verbs.length > 1) return { ok: false, errors: [{ code: "badVerb", message: "The verb argument is repeated." }] };
  const verb = verbs[0]!;
  if (!(OAI_VERBS as readonly string[]).includes(verb))
    return { ok: false, errors: [{ code: "badVerb", message: `"${verb}" is not an OAI-PMH verb.` }] };
  const rules = ARGUMENTS[verb as OaiVerb];
  const args = new Map<string, string>();
  const errors: OaiError[] = [];
  for (const [name, value] of pairs) {
    if (name === "verb") continue;
    const allowed = rules.required.includes(name) || rules.optional.includes(name) || (rules.exclusive && name === "resumptionToken");
    if (!allowed) errors.push({ code: "badArgument", message: `${verb} takes no argument "${name}".` });
    else if (args.has(name)) errors.push({ code: "badArgument", message: `The argument "${name}" is repeated.` });
    else args.set(name, value);
  }
  if (errors.length > 0) return { ok: false, errors };
  const token = args.get("resumptionToken");
  if (token !== undefined) {
    if (args.size > 1) return { ok: false, errors: [{ code: "badArgument", message: "resumptionToken is an exclusive argument." }] };
    const echo = { verb, resumptionToken: token };
    if (verb === "ListSets") return { ok: true, request: { verb: "ListSets", resumptionToken: token }, echo };
    return { ok: true, request: { verb: verb as "ListIdentifiers" | "ListRecords", resumptionToken: token }, echo };
  }
  for (const name of rules.required) {
    if (!args.has(name)) errors.push({ code: "badArgument", message: `${verb} needs the argument "${name}".` });
  }
  const from = args.has("from") ? parseOaiTime(args.get("from")!) : null;
  const until = args.has("until") ? parseOaiTime(args.get("until")!) : null;
  if (args.has("from") && from === null)
    errors.push({ code: "badArgument", message: "from is not a UTC date (YYYY-MM-DD) or time (YYYY-MM-DDThh:mm:ssZ)." });
  if (args.has("until") && until === null)
    errors.push({ code: "badArgument", message: "until is not a UTC date (YYYY-MM-DD) or time (YYYY-MM-DDThh:mm:ssZ)." });
  if (from && until && from.day !== until.day)
    errors.push({ code: "badArgument", message: "from and until must have the same granularity." });
  if (from && until && from.seconds > until.seconds) errors.push({ code: "badArgument", message: "from is later than until." });
  if (errors.length > 0) return { ok: false, errors };
  const echo = Object.fromEntries([["verb", verb], ...args]);
  switch (verb as OaiVerb) {
    case "Identify":
      return { ok: true, request: { verb: "Identify" }, echo };
    case "ListMetadataFormats":
      return { ok: true, request: { verb: "ListMetadataFormats", identifier: args.get("identifier") ?? null }, echo };
    case "ListSets":
      return { ok: true, request: { verb: "ListSets", resumptionToken: null }, echo };
    case "GetRecord":
      return {
        ok: true,
        request: { verb: "GetRecord", identifier: args.get("identifier")!, metadataPrefix: args.get("metadataPrefix")! },
        echo,
      };
    default:
      return {
        ok: true,
        request: {
          verb: verb as "ListIdentifiers" | "ListRecords",
          metadataPrefix: args.get("metadataPrefix")!,
          from,
          until,
          set: args.get("set") ?? null,
        },
        echo,
      };
  }
}

/** `YYYY-MM-DDThh:mm:ssZ` of Unix seconds: the repository's granularity. */
export const oaiDatestamp = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Where a list request stopped, carried by its resumption token. */
export interface ListPosition {
  metadataPrefix: string;
  /** The selection: `published_at` bounds in Unix seconds, inclusive. */
  from: number | null;
  until: number | null;
  /** The last item sent: its datestamp and version (the list's order). */
  after: { seconds: number; version: string };
  /** Items sent before the next page, and in all. */
  cursor: number;
  completeListSize: number;
  /** Unix seconds. */
  expiresAt: number;
}

/**
 * A resumption token: the position as base64url JSON. Not signed: it holds only what a harvester
 * could ask for with `from` and `until` itself, so a forged one reads nothing it could not read anyway.
 */
export function encodeResumptionToken(position: ListPosition): string {
  const { metadataPrefix, from, until, after, cursor, completeListSize, expiresAt } = position;
  const payload = [1, metadataPrefix, from, until, after.seconds, after.version, cursor, completeListSize, expiresAt];
  return toBase64Url(new TextEncoder().encode(JSON.stringify(payload)));
}

/** The position a token names, or why it is refused (`badResumptionToken`). */
export function decodeResumptionToken(token: string, nowSeconds: number): ListPosition | OaiError {
  const bad = (message: string): OaiError => ({ code: "badResumptionToken", message });
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64Url(token)));
  } catch {
    return bad("The resumption token is not one this repository issued.");
  }
  const nullableInt = (value: unknown) => value === null || Number.isSafeInteger(value);
  if (
    !Array.isArray(payload) ||
    payload.length !== 9 ||
    payload[0] !== 1 ||
    typeof payload[1] !== "string" ||
    !nullableInt(payload[2]) ||
    !nullableInt(payload[3]) ||
    !Number.isSafeInteger(payload[4]) ||
    typeof payload[5] !== "string" ||
    !Number.isSafeInteger(payload[6]) ||
    !Number.isSafeInteger(payload[7]) ||
    !Number.isSafeInteger(payload[8])
  ) {
    return bad("The resumption token is not one this repository issued.");
  }
  const [, metadataPrefix, from, until, seconds, version, cursor, completeListSize, expiresAt] = payload as [
    number,
    string,
    number | null,
    number | null,
    number,
    string,
    number,
    number,
    number,
  ];
  if (expiresAt <= nowSeconds) return bad("The resumption token has expired; start the list again.");
  return { metadataPrefix, from, until, after: { seconds, version }, cursor, completeListSize, expiresAt };
}

/** A metadata format the repository offers. */
export interface OaiFormat {
  prefix: string;
  schema: string;
  namespace: string;
}

export interface OaiHeader {
  identifier: string;
  datestamp: number;
}

/** A record: its header and its metadata (one XML element, in its own namespace). */
export interface OaiRecord {
  header: OaiHeader;
  metadata: string;
}

/** What a verb answers, besides the errors. */
export type OaiBody =
  | {
      verb: "Identify";
      repositoryName: string;
      baseUrl: string;
      adminEmails: readonly string[];
      earliestDatestamp: number;
      /** `oai-identifier` description: only for a host that is a domain name (the scheme's rule). */
      repositoryIdentifier: string | null;
      sampleIdentifier: string;
    }
  | { verb: "ListMetadataFormats"; formats: readonly OaiFormat[] }
  | { verb: "ListIdentifiers"; headers: readonly OaiHeader[]; token: ResumptionElement | null }
  | { verb: "ListRecords"; records: readonly OaiRecord[]; token: ResumptionElement | null }
  | { verb: "GetRecord"; record: OaiRecord };

/** The resumptionToken element: the token (empty on the last page of a list that had several). */
export interface ResumptionElement {
  token: string;
  expiresAt: number | null;
  completeListSize: number;
  cursor: number;
}

function headerXml(header: OaiHeader): string {
  return element("header", {}, textElement("identifier", header.identifier), textElement("datestamp", oaiDatestamp(header.datestamp)));
}

function recordXml(record: OaiRecord): string {
  return element("record", {}, headerXml(record.header), element("metadata", {}, record.metadata));
}

function tokenXml(token: ResumptionElement | null): string {
  if (token === null) return "";
  return textElement("resumptionToken", token.token, {
    expirationDate: token.expiresAt === null ? null : oaiDatestamp(token.expiresAt),
    completeListSize: String(token.completeListSize),
    cursor: String(token.cursor),
  });
}

function bodyXml(body: OaiBody): string {
  switch (body.verb) {
    case "Identify": {
      const description =
        body.repositoryIdentifier === null
          ? ""
          : element(
              "description",
              {},
              element(
                "oai-identifier",
                {
                  xmlns: "http://www.openarchives.org/OAI/2.0/oai-identifier",
                  "xsi:schemaLocation":
                    "http://www.openarchives.org/OAI/2.0/oai-identifier http://www.openarchives.org/OAI/2.0/oai-identifier.xsd",
                },
                textElement("scheme", "oai"),
                textElement("repositoryIdentifier", body.repositoryIdentifier),
                textElement("delimiter", ":"),
                textElement("sampleIdentifier", body.sampleIdentifier),
              ),
            );
      return element(
        "Identify",
        {},
        textElement("repositoryName", body.repositoryName),
        textElement("baseURL", body.baseUrl),
        textElement("protocolVersion", "2.0"),
        ...body.adminEmails.map((email) => textElement("adminEmail", email)),
        textElement("earliestDatestamp", oaiDatestamp(body.earliestDatestamp)),
        textElement("deletedRecord", "no"),
        textElement("granularity", "YYYY-MM-DDThh:mm:ssZ"),
        description,
      );
    }
    case "ListMetadataFormats":
      return element(
        "ListMetadataFormats",
        {},
        ...body.formats.map((format) =>
          element(
            "metadataFormat",
            {},
            textElement("metadataPrefix", format.prefix),
            textElement("schema", format.schema),
            textElement("metadataNamespace", format.namespace),
          ),
        ),
      );
    case "ListIdentifiers":
      return element("ListIdentifiers", {}, ...body.headers.map(headerXml), tokenXml(body.token));
    case "ListRecords":
      return element("ListRecords", {}, ...body.records.map(recordXml), tokenXml(body.token));
    case "GetRecord":
      return element("GetRecord", {}, recordXml(body.record));
  }
}

/**
 * The response document: the root in the OAI-PMH namespace, `responseDate`, the `request` echo
 * (its attributes only when the request was well-formed: not after `badVerb` or `badArgument`),
 * then the verb's element or the errors.
 */
export function oaiResponse(input: {
  responseDate: number;
  baseUrl: string;
  echo: Record<string, string> | null;
  answer: OaiBody | { errors: readonly OaiError[] };
}): string {
  const answer =
    "errors" in input.answer
      ? input.answer.errors.map((error) => textElement("error", error.message, { code: error.code })).join("")
      : bodyXml(input.answer);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element(
    "OAI-PMH",
    { xmlns: OAI_NAMESPACE, "xmlns:xsi": XSI_NAMESPACE, "xsi:schemaLocation": `${OAI_NAMESPACE} ${OAI_SCHEMA}` },
    textElement("responseDate", oaiDatestamp(input.responseDate)),
    textElement("request", input.baseUrl, input.echo ?? {}),
    answer,
  )}\n`;
}
