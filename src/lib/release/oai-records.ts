import type { OaiFormat } from "../oai-pmh";
import { element, textElement } from "../xml";
import { type DataCiteAttributes, versionRecord } from "./datacite";
import { describedAs, doiUrl, isoDate, type ReleaseDescription } from "./publication";

/** The metadata formats of the OAI-PMH repository of releases. */
export const OAI_DC: OaiFormat = {
  prefix: "oai_dc",
  schema: "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
  namespace: "http://www.openarchives.org/OAI/2.0/oai_dc/",
};

export const OAI_DATACITE: OaiFormat = {
  prefix: "oai_datacite",
  schema: "http://schema.datacite.org/oai/oai-1.1/oai.xsd",
  namespace: "http://schema.datacite.org/oai/oai-1.1/",
};

const XSI = "http://www.w3.org/2001/XMLSchema-instance";
const KERNEL_4 = "http://datacite.org/schema/kernel-4";

/** Unqualified Dublin Core of a release. */
export function oaiDublinCore(release: ReleaseDescription): string {
  const dc = (name: string, text: string) => textElement(`dc:${name}`, text);
  return element(
    "oai_dc:dc",
    {
      "xmlns:oai_dc": OAI_DC.namespace,
      "xmlns:dc": "http://purl.org/dc/elements/1.1/",
      "xmlns:xsi": XSI,
      "xsi:schemaLocation": `${OAI_DC.namespace} ${OAI_DC.schema}`,
    },
    dc("title", release.title),
    dc("creator", release.creator.name),
    ...release.credits.map((credit) => dc("contributor", credit.username)),
    ...release.subjects.map((subject) => dc("subject", subject)),
    dc("description", describedAs(release)),
    dc("publisher", release.publisher),
    dc("date", isoDate(release.publishedAt ?? release.snapshotAt)),
    dc("type", "Dataset"),
    ...[...new Set(release.files.map((file) => file.mediaType))].sort().map((format) => dc("format", format)),
    ...(release.doi ? [dc("identifier", doiUrl(release.doi))] : []),
    dc("identifier", release.url),
    ...(release.conceptDoi ? [dc("relation", doiUrl(release.conceptDoi))] : []),
    dc("language", "en"),
    dc("rights", `${release.licence.title} (${release.licence.name}): ${release.licence.path}`),
  );
}

/** DataCite kernel-4 XML of a DataCite record (which must have its DOI: the schema requires an identifier). */
export function dataciteXml(record: DataCiteAttributes & { doi: string }): string {
  const nameIds = (ids: DataCiteAttributes["creators"][number]["nameIdentifiers"]) =>
    ids.map((id) =>
      textElement("nameIdentifier", id.nameIdentifier, { nameIdentifierScheme: id.nameIdentifierScheme, schemeURI: id.schemeUri }),
    );
  const list = (name: string, items: string[]) => (items.length === 0 ? "" : element(name, {}, ...items));
  return element(
    "resource",
    { xmlns: KERNEL_4, "xmlns:xsi": XSI, "xsi:schemaLocation": `${KERNEL_4} http://schema.datacite.org/meta/kernel-4/metadata.xsd` },
    textElement("identifier", record.doi.toUpperCase(), { identifierType: "DOI" }),
    list(
      "creators",
      record.creators.map((creator) =>
        element(
          "creator",
          {},
          textElement("creatorName", creator.name, { nameType: creator.nameType }),
          ...nameIds(creator.nameIdentifiers),
        ),
      ),
    ),
    list(
      "titles",
      record.titles.map((title) => textElement("title", title.title)),
    ),
    textElement("publisher", record.publisher),
    textElement("publicationYear", String(record.publicationYear)),
    textElement("resourceType", record.types.resourceType, { resourceTypeGeneral: record.types.resourceTypeGeneral }),
    list(
      "subjects",
      record.subjects.map((subject) => textElement("subject", subject.subject)),
    ),
    list(
      "contributors",
      record.contributors.map((contributor) =>
        element(
          "contributor",
          { contributorType: contributor.contributorType },
          textElement("contributorName", contributor.name),
          ...nameIds(contributor.nameIdentifiers),
        ),
      ),
    ),
    list(
      "dates",
      record.dates.map((date) => textElement("date", date.date, { dateType: date.dateType })),
    ),
    textElement("language", record.language),
    list(
      "relatedIdentifiers",
      record.relatedIdentifiers.map((related) =>
        textElement("relatedIdentifier", related.relatedIdentifier, {
          relatedIdentifierType: related.relatedIdentifierType,
          relationType: related.relationType,
        }),
      ),
    ),
    list(
      "sizes",
      record.sizes.map((size) => textElement("size", size)),
    ),
    list(
      "formats",
      record.formats.map((format) => textElement("format", format)),
    ),
    record.version === undefined ? "" : textElement("version", record.version),
    list(
      "rightsList",
      record.rightsList.map((rights) =>
        textElement("rights", rights.rights, {
          rightsURI: rights.rightsUri,
          rightsIdentifier: rights.rightsIdentifier,
          rightsIdentifierScheme: rights.rightsIdentifierScheme,
          schemeURI: rights.schemeUri,
        }),
      ),
    ),
    list(
      "descriptions",
      record.descriptions.map((description) =>
        textElement("description", description.description, { descriptionType: description.descriptionType }),
      ),
    ),
  );
}

/**
 * `oai_datacite` of a release with a registered DOI: the kernel-4 record inside DataCite's OAI
 * wrapper, which names the DataCite repository (its symbol: the repository id).
 */
export function oaiDataCite(release: ReleaseDescription & { doi: string }, datacentreSymbol: string): string {
  const record = versionRecord(release, release.doi, release.conceptDoi) as DataCiteAttributes & { doi: string };
  return element(
    "oai_datacite",
    { xmlns: OAI_DATACITE.namespace, "xmlns:xsi": XSI, "xsi:schemaLocation": `${OAI_DATACITE.namespace} ${OAI_DATACITE.schema}` },
    textElement("schemaVersion", "4"),
    textElement("datacentreSymbol", datacentreSymbol),
    element("payload", {}, dataciteXml(record)),
  );
}
