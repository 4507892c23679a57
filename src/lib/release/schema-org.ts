import { citationText, keywords } from "./citations";
import { describedAs, doiUrl, isoDate, type ReleaseDescription } from "./publication";

/**
 * schema.org `Dataset` for a release (JSON-LD): what `application/ld+json` answers and what the
 * landing page embeds, with the properties dataset search engines require (name, description)
 * and recommend (url, identifier, version, license, creator, publisher, datePublished,
 * isAccessibleForFree, keywords, distribution as DataDownload, includedInDataCatalog).
 */
export function schemaOrgDataset(release: ReleaseDescription): Record<string, unknown> {
  const identifiers = [...(release.doi ? [doiUrl(release.doi)] : []), release.url];
  return {
    "@context": "https://schema.org",
    "@type": "Dataset",
    "@id": identifiers[0],
    name: release.title,
    description: describedAs(release),
    url: release.url,
    identifier: identifiers,
    ...(release.doi ? { sameAs: doiUrl(release.doi) } : {}),
    version: release.version,
    license: release.licence.path,
    isAccessibleForFree: true,
    creator: {
      "@type": "Organization",
      name: release.creator.name,
      ...(release.creator.ror ? { identifier: release.creator.ror, sameAs: release.creator.ror } : {}),
    },
    ...(release.credits.length > 0
      ? {
          contributor: release.credits.map((credit) => ({
            "@type": "Person",
            name: credit.username,
            ...(credit.orcid ? { identifier: `https://orcid.org/${credit.orcid}`, sameAs: `https://orcid.org/${credit.orcid}` } : {}),
          })),
        }
      : {}),
    publisher: { "@type": "Organization", name: release.publisher },
    ...(release.publishedAt === null ? {} : { datePublished: isoDate(release.publishedAt) }),
    dateCreated: isoDate(release.snapshotAt),
    keywords: keywords(release),
    citation: citationText(release),
    ...(release.conceptDoi
      ? { isPartOf: { "@type": "CreativeWork", "@id": doiUrl(release.conceptDoi), identifier: doiUrl(release.conceptDoi) } }
      : {}),
    distribution: release.files.map((file) => ({
      "@type": "DataDownload",
      name: file.path,
      contentUrl: file.url,
      encodingFormat: file.mediaType,
      contentSize: `${file.bytes} B`,
      sha256: file.sha256,
    })),
    includedInDataCatalog: { "@type": "DataCatalog", name: release.catalogue.name, url: release.catalogue.url },
  };
}

/**
 * JSON for the inside of an HTML `<script>` element: `<`, `>` and `&` as `\u` escapes (so neither
 * `</script>` nor `<!--` can end or change the element), and U+2028/U+2029 too. Still the same JSON.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
