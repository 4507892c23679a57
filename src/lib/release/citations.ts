import { citationYear, citedLink, describedAs, doiUrl, isoDate, oneLine, RELEASE_KEYWORDS, type ReleaseDescription } from "./publication";

/**
 * The citation formats a release is offered in by content negotiation (as DOI resolvers offer
 * them): a formatted reference, BibTeX, RIS and CSL-JSON. Written here rather than with a
 * citation library: each is a template of a dozen fields, and the libraries (citation-js and
 * its CSL engine) weigh megabytes in a Worker; the tests read every output back with them.
 */

/** Who a citation names as the author: the creator (an organisation). */
const author = (release: Pick<ReleaseDescription, "creator">) => release.creator.name;

/** What the formatted citation needs of a release. */
export type CitedRelease = Pick<ReleaseDescription, "creator" | "publisher" | "title" | "version" | "snapshotAt" | "doi" | "url">;

/**
 * The suggested citation, in the common data-set style (APA): `Creator (year). Title (Version v)
 * [Data set]. Publisher. Link`; the publisher is left out when it is the creator, and the link
 * is the DOI once registered. Without a DOI and with the creator the publisher, this is the
 * sentence the release's README gives.
 */
export function citationText(release: CitedRelease): string {
  const publisher = release.publisher === author(release) ? "" : ` ${oneLine(release.publisher)}.`;
  return `${oneLine(author(release))} (${citationYear(release)}). ${oneLine(release.title)} (Version ${release.version}) [Data set].${publisher} ${citedLink(release)}`;
}

/** A BibTeX key: the publisher and the version, letters, digits and underscores only. */
export function bibtexKey(publisher: string, version: string): string {
  const slug = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "") || "dataset";
  return `${slug(publisher)}_${slug(version)}`;
}

// TeX's special characters as commands that need no package; braces as commands too, since
// BibTeX counts braces without regard to a backslash in front of them; `<` and `>`, which TeX's
// default text font prints as inverted exclamation and question marks.
const TEX: Readonly<Record<string, string>> = {
  "<": "\\textless{}",
  ">": "\\textgreater{}",
  "\\": "\\textbackslash{}",
  "{": "\\textbraceleft{}",
  "}": "\\textbraceright{}",
  "%": "\\%",
  "&": "\\&",
  $: "\\$",
  "#": "\\#",
  _: "\\_",
  "~": "\\textasciitilde{}",
  "^": "\\textasciicircum{}",
};

/** A value inside a BibTeX field's braces: one line, TeX's special characters escaped, any other character as is (UTF-8). */
export function bibtexValue(text: string): string {
  return oneLine(text).replace(/[\\{}%&$#_~^<>]/g, (char) => TEX[char]!);
}

/**
 * A BibTeX `@misc` entry (BibTeX has no data-set type; biblatex reads `@misc` too), as DOI
 * resolvers give one: the creator as a corporate author in double braces, the title protected
 * from re-casing, year, publisher, version, DOI and URL.
 */
export function bibtex(release: ReleaseDescription): string {
  const fields: [string, string][] = [
    ["author", `{${bibtexValue(author(release))}}`],
    ["title", `{${bibtexValue(release.title)}}`],
    ["year", String(citationYear(release))],
    ["publisher", bibtexValue(release.publisher)],
    ["version", bibtexValue(release.version)],
  ];
  if (release.doi) fields.push(["doi", bibtexValue(release.doi)]);
  fields.push(["url", bibtexValue(citedLink(release))]);
  fields.push(["note", "Data set"]);
  const width = Math.max(...fields.map(([name]) => name.length));
  const body = fields.map(([name, value]) => `  ${name.padEnd(width)} = {${value}}`).join(",\n");
  return `@misc{${bibtexKey(release.publisher, release.version)},\n${body}\n}\n`;
}

/** A RIS record (`TY  - DATA` ... `ER  - `), CRLF line ends, every value on one line. */
export function ris(release: ReleaseDescription): string {
  const published = release.publishedAt ?? release.snapshotAt;
  const lines: [string, string][] = [
    ["TY", "DATA"],
    ["TI", release.title],
    ["AU", author(release)],
    ["PY", String(citationYear(release))],
    ["DA", isoDate(published).replace(/-/g, "/")],
    ["PB", release.publisher],
    ["ET", release.version],
  ];
  if (release.doi) lines.push(["DO", release.doi]);
  lines.push(["UR", citedLink(release)]);
  lines.push(["AB", describedAs(release)]);
  for (const keyword of keywords(release)) lines.push(["KW", keyword]);
  lines.push(["ER", ""]);
  return `${lines.map(([tag, value]) => `${tag}  - ${oneLine(value)}`).join("\r\n")}\r\n`;
}

/** The subjects (product types), then the keywords every release carries. */
export const keywords = (release: ReleaseDescription): string[] => [...new Set([...release.subjects, ...RELEASE_KEYWORDS])];

/** CSL-JSON (citeproc JSON) of one item, as DOI content negotiation answers it: an object, not a list. */
export function cslJson(release: ReleaseDescription): Record<string, unknown> {
  const issued = new Date((release.publishedAt ?? release.snapshotAt) * 1000);
  return {
    id: release.doi ? doiUrl(release.doi) : release.url,
    type: "dataset",
    title: release.title,
    version: release.version,
    publisher: release.publisher,
    author: [{ literal: author(release) }],
    ...(release.credits.length > 0 ? { contributor: release.credits.map((credit) => ({ literal: credit.username })) } : {}),
    issued: { "date-parts": [[issued.getUTCFullYear(), issued.getUTCMonth() + 1, issued.getUTCDate()]] },
    ...(release.doi ? { DOI: release.doi } : {}),
    URL: citedLink(release),
    abstract: describedAs(release),
    keyword: keywords(release).join(", "),
  };
}
