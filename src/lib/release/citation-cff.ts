import { keywords } from "./citations";
import { describedAs, isoDate, type ReleaseDescription } from "./publication";

/**
 * CITATION.cff (Citation File Format 1.2.0) of a release, written by its build next to README.md.
 * Authors: the creator (an entity), then the contributors who opted in to credit (persons by
 * their username as `alias`, with their ORCID iD): CFF 1.2.0 has no other list of people. Every
 * string is a double-quoted YAML scalar (`yamlString`).
 */
export function citationCff(release: ReleaseDescription): string {
  const q = yamlString;
  const lines: string[] = [
    "cff-version: 1.2.0",
    `message: ${q("If you use this dataset, please cite it using the metadata from this file.")}`,
    "type: dataset",
    `title: ${q(release.title)}`,
    `version: ${q(release.version)}`,
    `date-released: ${q(isoDate(release.snapshotAt))}`,
    `abstract: ${q(describedAs(release))}`,
    "authors:",
    `  - name: ${q(release.creator.name)}`,
    ...(release.creator.ror ? [`    website: ${q(release.creator.ror)}`] : []),
    ...release.credits.flatMap((credit) => [
      `  - alias: ${q(credit.username)}`,
      ...(credit.orcid ? [`    orcid: ${q(`https://orcid.org/${credit.orcid}`)}`] : []),
    ]),
  ];
  if (release.doi) lines.push(`doi: ${q(release.doi)}`);
  lines.push("identifiers:");
  if (release.doi) lines.push("  - type: doi", `    value: ${q(release.doi)}`, `    description: ${q("This version")}`);
  if (release.conceptDoi) lines.push("  - type: doi", `    value: ${q(release.conceptDoi)}`, `    description: ${q("All versions")}`);
  lines.push("  - type: url", `    value: ${q(release.url)}`, `    description: ${q("This version's landing page and metadata")}`);
  lines.push(`url: ${q(release.url)}`);
  lines.push(`repository: ${q(release.catalogue.url)}`);
  lines.push(`license: ${q(release.licence.name)}`);
  lines.push("keywords:", ...keywords(release).map((keyword) => `  - ${q(keyword)}`));
  return `${lines.join("\n")}\n`;
}

/**
 * A double-quoted YAML 1.2 scalar holding exactly `text`: quotes and backslashes escaped, and every
 * character YAML does not allow printed (controls, line breaks, U+2028/U+2029, U+FEFF, U+FFFE/F)
 * as an escape; other characters as they are.
 */
export function yamlString(text: string): string {
  let out = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (
      (code >= 0x20 && code <= 0x7e) ||
      (code >= 0xa0 && code <= 0xd7ff && code !== 0x2028 && code !== 0x2029) ||
      (code >= 0xe000 && code <= 0xfffd && code !== 0xfeff) ||
      code >= 0x10000
    )
      out += char;
    else out += `\\u${code.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}
