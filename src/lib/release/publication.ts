import type { Licence } from "./licences";

/**
 * A release as its citations, metadata records and landing page describe it (decisions.md,
 * "Publishing releases"): every output of src/lib/release/{citations,datacite,schema-org,
 * landing-page,citation-cff}.ts and the OAI-PMH records are made from this one value, so they
 * cannot disagree.
 */
export interface ReleaseDescription {
  readonly version: string;
  readonly title: string;
  readonly description: string | null;
  readonly licence: Licence;
  readonly publisher: string;
  /** The creator (an organisation) and its ROR id as a URL. */
  readonly creator: { readonly name: string; readonly ror: string | null };
  /** The release's own URL (on the origin it was requested on): what citations name without a DOI. */
  readonly url: string;
  /** Unix seconds. */
  readonly snapshotAt: number;
  /** Unix seconds; null before publication (CITATION.cff is written before it). */
  readonly publishedAt: number | null;
  /** The version DOI, where it is registered (or, in the files a build writes, the one it will be registered as). */
  readonly doi: string | null;
  /** The DOI of all versions, under the same rule. */
  readonly conceptDoi: string | null;
  readonly counts: { readonly records: number; readonly baseProducts: number; readonly images: number; readonly recordMaterials: number };
  /** Names of the product types of its records. */
  readonly subjects: readonly string[];
  /** Contributors who opted in to credit, by username (and ORCID iD). */
  readonly credits: readonly Credit[];
  /** The files (the image files are summed up in `imageFiles`), with the URLs they are downloaded from. */
  readonly files: readonly DescribedFile[];
  readonly imageFiles: { readonly count: number; readonly bytes: number };
  /** The release published before this one, if any: what this one is a new version of. */
  readonly previous: { readonly version: string; readonly url: string; readonly doi: string | null } | null;
  /** The catalogue of all releases: the list route on the same origin. */
  readonly catalogue: { readonly name: string; readonly url: string };
}

export interface Credit {
  readonly username: string;
  readonly orcid: string | null;
}

export interface DescribedFile {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly mediaType: string;
  readonly url: string;
}

/** Keywords every release carries, besides its product types. */
export const RELEASE_KEYWORDS = ["circular economy", "product disassembly", "bill of materials", "materials"] as const;

/** The DOI as a resolvable URL (DOI names are case-insensitive; DataCite stores them in lower case). */
export const doiUrl = (doi: string): string => `https://doi.org/${doi}`;

/** `YYYY-MM-DD` of a Unix-seconds instant (UTC). */
export const isoDate = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(0, 10);

/** The year a release is cited by: that of its snapshot, as the README written by its build names it. */
export const citationYear = (release: Pick<ReleaseDescription, "snapshotAt">): number =>
  new Date(release.snapshotAt * 1000).getUTCFullYear();

/** Where a citation points: the DOI when there is one, else the release's URL. */
export const citedLink = (release: Pick<ReleaseDescription, "doi" | "url">): string => (release.doi ? doiUrl(release.doi) : release.url);

/**
 * The release's description, or one made from its counts when it has none; one that is shorter
 * than 50 characters (what dataset search engines ask for at least) gets the summary after it.
 */
export function describedAs(release: Pick<ReleaseDescription, "description" | "counts" | "version" | "publisher">): string {
  const { records, baseProducts, images, recordMaterials } = release.counts;
  const summary =
    `Version ${release.version} of the ${release.publisher} dataset of products taken apart for study: ` +
    `${counted(records, "record")} (${counted(baseProducts, "base product")} with their components), ` +
    `${counted(recordMaterials, "bill-of-materials row")} and ${counted(images, "image")}, as CSV and Parquet tables.`;
  const own = release.description?.trim() ?? "";
  if (own === "") return summary;
  return own.length >= 50 ? own : `${own}\n\n${summary}`;
}

/** `n thing` or `n things`, `n` written out in full. */
export const counted = (n: number, singular: string, plural = `${singular}s`): string => `${n} ${n === 1 ? singular : plural}`;

/** Line breaks and runs of white space as single spaces: for formats whose values are one line. */
export const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();

/** The suffix of a release's version DOI under a prefix (`relab.<version>`), and of the concept DOI. */
export const versionDoi = (prefix: string, version: string): string => `${prefix}/relab.${version.toLowerCase()}`;
export const conceptDoi = (prefix: string): string => `${prefix}/relab.all`;
