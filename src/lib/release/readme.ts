import { bibtexKey, bibtexValue } from "./citations";
import { isoDatetime } from "./columns";
import type { Licence } from "./licences";
import { type Credit, doiUrl } from "./publication";

export interface ReadmeInput {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
  /** Who publishes the data. */
  readonly publisher: string;
  /** Who a citation names as the author (an organisation); the publisher when not given. */
  readonly creator?: string;
  /** The DOI the release is registered under, and the DOI of all its versions. */
  readonly doi?: string | null;
  readonly conceptDoi?: string | null;
  /** Contributors who opted in to be named (with their ORCID iD). */
  readonly credits?: readonly Credit[];
  /** The instant the data was taken. */
  readonly snapshotAt: Date;
  /** The release's address, which the citation gives. */
  readonly url: string;
  /** Where the files are served: a file's URL is this followed by its path. */
  readonly filesUrl: string;
  readonly licence: Licence;
  /** The files to list (the tables; images can be summed up in `description`). */
  readonly files: readonly { readonly path: string; readonly bytes: number; readonly description?: string }[];
  /** How many records pass, fail or are not checked by each quality check (releases with a quality table). */
  readonly quality?: {
    readonly records: number;
    readonly checks: readonly { readonly code: string; readonly pass: number; readonly fail: number; readonly notApplicable: number }[];
  };
}

/**
 * README.md of a release: what it is, how to cite it (a sentence in the common data-set style
 * and a BibTeX entry), its licence, its files, how to check them and how to open them.
 */
export function releaseReadme(input: ReadmeInput): string {
  const { title, version, publisher, url, filesUrl, licence } = input;
  const author = input.creator ?? publisher;
  const doi = input.doi ?? null;
  const link = doi ? doiUrl(doi) : url;
  const snapshot = isoDatetime(input.snapshotAt.getTime());
  const year = snapshot.slice(0, 4);
  const key = bibtexKey(publisher, version);
  const credits = input.credits ?? [];
  const identifiers = [
    ...(doi ? [`DOI of this version: [${doi}](${doiUrl(doi)})`] : []),
    ...(input.conceptDoi ? [`DOI of all versions (resolves to the newest): [${input.conceptDoi}](${doiUrl(input.conceptDoi)})`] : []),
  ];
  const citedPublisher = author === publisher ? "" : ` ${publisher}.`;
  const creditText =
    credits.length === 0
      ? ""
      : `\nCollected with contributions from ${credits
          .map((credit) =>
            credit.orcid ? `${credit.username} ([ORCID ${credit.orcid}](https://orcid.org/${credit.orcid}))` : credit.username,
          )
          .join(", ")}; every other contributor appears under a pseudonym.\n`;
  const files = input.files.map((f) => `| \`${f.path}\` | ${f.bytes.toLocaleString("en-US")} | ${cell(f.description ?? "")} |`).join("\n");
  const parquet = input.files.find((f) => f.path.endsWith(".parquet"))?.path ?? "records.parquet";
  const csv = input.files.find((f) => f.path.endsWith(".csv"))?.path ?? "records.csv";
  return `# ${title}

Version ${version}, a snapshot of the data as it stood at ${snapshot}. A published release never
changes: later edits and deletions on the live platform do not reach it.
${input.description ? `\n${input.description}\n` : ""}
## How to cite

> ${author} (${year}). *${title}* (Version ${version}) [Data set].${citedPublisher} ${link}
${identifiers.length ? `\n${identifiers.map((line) => `- ${line}`).join("\n")}\n` : ""}
\`\`\`bibtex
@misc{${key},
  author    = {{${bibtexValue(author)}}},
  title     = {{${bibtexValue(title)}}},
  year      = {${year}},
  version   = {${bibtexValue(version)}},${doi ? `\n  doi       = {${bibtexValue(doi)}},` : ""}
  url       = {${link}},
  note      = {Data as of ${snapshot}},
}
\`\`\`
${creditText}
## Licence

[${licence.title}](${licence.path}) (\`${licence.name}\`).

## Files

Each table comes as CSV (UTF-8, RFC 4180, header row) and as Parquet, with the same columns.
\`datapackage.json\` describes every file (Frictionless Data Package v2: columns and their types,
keys, sizes, SHA-256 hashes); \`SHA256SUMS\` lists the hashes again; \`CITATION.cff\` says how to
cite the release (Citation File Format).

| file | bytes | contents |
|---|---:|---|
${files}

Check a download: \`sha256sum -c SHA256SUMS --ignore-missing\`.
${input.quality ? qualitySection(input.quality) : ""}
In CSV, a text cell that starts with \`=\`, \`+\`, \`-\`, \`@\`, a tab or a carriage return has a
\`'\` in front, so spreadsheets do not run it as a formula; the Parquet files hold the exact text.

## Open

\`\`\`python
import pandas as pd
records = pd.read_parquet("${filesUrl}${parquet}")
table = pd.read_csv("${filesUrl}${csv}")
\`\`\`

\`\`\`sql
-- DuckDB reads the Parquet files over HTTP without downloading them whole
SELECT count(*) FROM '${filesUrl}${parquet}';
\`\`\`
`;
}

/** Share of `part` in `whole` as a percentage with one decimal; a dash when `whole` is 0. */
function percent(part: number, whole: number): string {
  return whole === 0 ? "–" : `${((part * 100) / whole).toFixed(1)} %`;
}

/** The quality summary: per check, how many of the release's records pass, fail or are not checked. */
function qualitySection(quality: NonNullable<ReadmeInput["quality"]>): string {
  const rows = quality.checks
    .map(
      (c) =>
        `| \`${c.code}\` | ${c.pass.toLocaleString("en-US")} | ${c.fail.toLocaleString("en-US")} | ${c.notApplicable.toLocaleString("en-US")} | ${percent(c.pass, quality.records)} | ${percent(c.pass, c.pass + c.fail)} |`,
    )
    .join("\n");
  return `
## Record quality

\`quality.csv\` and \`quality.parquet\` hold every record's quality checks as they stood at the
snapshot: its score and, per check, \`pass\`, \`fail\` or \`not_applicable\` (\`datapackage.json\`
describes each check). Of the ${quality.records.toLocaleString("en-US")} records:

| check | pass | fail | not applicable | passing, of all records | passing, of those checked |
|---|---:|---:|---:|---:|---:|
${rows}
`;
}

/** Text inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ");
}
