import { keywords } from "./citations";
import { citationYear, counted, describedAs, doiUrl, isoDate, type ReleaseDescription } from "./publication";

/**
 * DataCite Metadata Schema 4 for a release, as the DataCite REST API's JSON:API attributes
 * (camelCase names): what registration sends, what `application/vnd.datacite.datacite+json`
 * answers, and, as kernel-4 XML, the payload of OAI-PMH's `oai_datacite`.
 */

export const DATACITE_SCHEMA_VERSION = "http://datacite.org/schema/kernel-4";

export interface NameIdentifier {
  nameIdentifier: string;
  nameIdentifierScheme: string;
  schemeUri: string;
}

export interface DataCiteAttributes {
  doi?: string;
  url: string;
  types: { resourceTypeGeneral: "Dataset"; resourceType: string };
  titles: { title: string }[];
  creators: { name: string; nameType: "Organizational"; nameIdentifiers: NameIdentifier[] }[];
  publisher: string;
  publicationYear: number;
  version?: string;
  language: string;
  subjects: { subject: string }[];
  contributors: { name: string; contributorType: "DataCollector"; nameIdentifiers: NameIdentifier[] }[];
  dates: { date: string; dateType: "Created" | "Issued" }[];
  relatedIdentifiers: { relatedIdentifier: string; relatedIdentifierType: "DOI" | "URL"; relationType: string }[];
  sizes: string[];
  formats: string[];
  rightsList: { rights: string; rightsUri: string; rightsIdentifier: string; rightsIdentifierScheme: "SPDX"; schemeUri: string }[];
  descriptions: { description: string; descriptionType: "Abstract" }[];
  schemaVersion: string;
}

const ror = (url: string): NameIdentifier => ({ nameIdentifier: url, nameIdentifierScheme: "ROR", schemeUri: "https://ror.org" });
const orcid = (id: string): NameIdentifier => ({
  nameIdentifier: `https://orcid.org/${id}`,
  nameIdentifierScheme: "ORCID",
  schemeUri: "https://orcid.org",
});

/** What both the version and the concept record say: everything but the identifier, version and relations. */
function common(release: ReleaseDescription): Omit<DataCiteAttributes, "doi" | "version" | "relatedIdentifiers"> {
  const { licence, counts } = release;
  const tableBytes = release.files.reduce((sum, file) => sum + file.bytes, 0) + release.imageFiles.bytes;
  return {
    url: release.url,
    types: { resourceTypeGeneral: "Dataset", resourceType: "Dataset release" },
    titles: [{ title: release.title }],
    creators: [
      { name: release.creator.name, nameType: "Organizational", nameIdentifiers: release.creator.ror ? [ror(release.creator.ror)] : [] },
    ],
    publisher: release.publisher,
    publicationYear: citationYear(release),
    language: "en",
    subjects: keywords(release).map((subject) => ({ subject })),
    contributors: release.credits.map((credit) => ({
      name: credit.username,
      contributorType: "DataCollector",
      nameIdentifiers: credit.orcid ? [orcid(credit.orcid)] : [],
    })),
    dates: [
      { date: isoDate(release.snapshotAt), dateType: "Created" },
      ...(release.publishedAt === null ? [] : [{ date: isoDate(release.publishedAt), dateType: "Issued" as const }]),
    ],
    sizes: [
      counted(counts.records, "record"),
      counted(counts.baseProducts, "base product"),
      counted(counts.recordMaterials, "bill-of-materials row"),
      counted(counts.images, "image"),
      counted(release.files.length + release.imageFiles.count, "file"),
      counted(tableBytes, "byte"),
    ],
    formats: [...new Set(release.files.map((file) => file.mediaType))].sort(),
    rightsList: [
      {
        rights: licence.title,
        rightsUri: licence.path,
        rightsIdentifier: licence.name,
        rightsIdentifierScheme: "SPDX",
        schemeUri: "https://spdx.org/licenses/",
      },
    ],
    descriptions: [{ description: describedAs(release), descriptionType: "Abstract" }],
    schemaVersion: DATACITE_SCHEMA_VERSION,
  };
}

/**
 * The record of a release's version DOI. Its relations are only true ones: `IsVersionOf` the
 * concept DOI (when there is one) and `IsNewVersionOf` the release published before it (its DOI
 * when registered, else its URL). `doi` is the DOI being registered or shown (none: the
 * release has none yet, and the record has no `doi`).
 */
export function versionRecord(release: ReleaseDescription, doi: string | null, conceptDoi: string | null): DataCiteAttributes {
  const related: DataCiteAttributes["relatedIdentifiers"] = [];
  if (conceptDoi) related.push({ relatedIdentifier: conceptDoi, relatedIdentifierType: "DOI", relationType: "IsVersionOf" });
  if (release.previous) {
    related.push(
      release.previous.doi
        ? { relatedIdentifier: release.previous.doi, relatedIdentifierType: "DOI", relationType: "IsNewVersionOf" }
        : { relatedIdentifier: release.previous.url, relatedIdentifierType: "URL", relationType: "IsNewVersionOf" },
    );
  }
  return { ...(doi ? { doi } : {}), ...common(release), version: release.version, relatedIdentifiers: related };
}

/**
 * The record of the concept DOI (all versions): the newest release's metadata without a version,
 * resolving to the newest release, `HasVersion` each version DOI registered so far.
 */
export function conceptRecord(
  newest: ReleaseDescription,
  conceptDoi: string,
  versionDois: readonly string[],
): DataCiteAttributes & { doi: string } {
  return {
    doi: conceptDoi,
    ...common(newest),
    relatedIdentifiers: versionDois.map((doi) => ({
      relatedIdentifier: doi,
      relatedIdentifierType: "DOI" as const,
      relationType: "HasVersion",
    })),
  };
}

/** `application/vnd.datacite.datacite+json`: the version record, with `id` the DOI's URL once there is one. */
export function dataciteJson(release: ReleaseDescription): Record<string, unknown> {
  const record = versionRecord(release, release.doi, release.conceptDoi);
  return { ...(release.doi ? { id: doiUrl(release.doi) } : {}), ...record };
}
