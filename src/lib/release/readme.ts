import { isoDatetime } from "./columns";
import type { Licence } from "./licences";

export interface ReadmeInput {
  readonly title: string;
  readonly version: string;
  readonly description?: string;
  /** Who publishes the data, as a citation names the author (an organisation). */
  readonly publisher: string;
  /** The instant the data was taken. */
  readonly snapshotAt: Date;
  /** The release's address, which the citation gives. */
  readonly url: string;
  /** Where the files are served: a file's URL is this followed by its path. */
  readonly filesUrl: string;
  readonly licence: Licence;
  /** The files to list (the tables; images can be summed up in `description`). */
  readonly files: readonly { readonly path: string; readonly bytes: number; readonly description?: string }[];
}

/**
 * README.md of a release: what it is, how to cite it (a sentence in the common data-set style
 * and a BibTeX entry), its licence, its files, how to check them and how to open them.
 */
export function releaseReadme(input: ReadmeInput): string {
  const { title, version, publisher, url, filesUrl, licence } = input;
  const snapshot = isoDatetime(input.snapshotAt.getTime());
  const year = snapshot.slice(0, 4);
  const key = `${slug(publisher)}_${slug(version)}`;
  const files = input.files.map((f) => `| \`${f.path}\` | ${f.bytes.toLocaleString("en-US")} | ${cell(f.description ?? "")} |`).join("\n");
  const parquet = input.files.find((f) => f.path.endsWith(".parquet"))?.path ?? "records.parquet";
  const csv = input.files.find((f) => f.path.endsWith(".csv"))?.path ?? "records.csv";
  return `# ${title}

Version ${version}, a snapshot of the data as it stood at ${snapshot}. A published release never
changes: later edits and deletions on the live platform do not reach it.
${input.description ? `\n${input.description}\n` : ""}
## How to cite

> ${publisher} (${year}). *${title}* (Version ${version}) [Data set]. ${url}

\`\`\`bibtex
@misc{${key},
  author    = {{${bibtex(publisher)}}},
  title     = {{${bibtex(title)}}},
  year      = {${year}},
  version   = {${bibtex(version)}},
  url       = {${url}},
  note      = {Data as of ${snapshot}},
}
\`\`\`

## Licence

[${licence.title}](${licence.path}) (\`${licence.name}\`).

## Files

Each table comes as CSV (UTF-8, RFC 4180, header row) and as Parquet, with the same columns.
\`datapackage.json\` describes every file (Frictionless Data Package v2: columns and their types,
keys, sizes, SHA-256 hashes); \`SHA256SUMS\` lists the hashes again.

| file | bytes | contents |
|---|---:|---|
${files}

Check a download: \`sha256sum -c SHA256SUMS --ignore-missing\`.

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

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "") || "dataset"
  );
}

/** BibTeX's special characters, escaped; braces dropped (they would unbalance the entry). */
function bibtex(text: string): string {
  return text
    .replace(/[{}]/g, "")
    .replace(/([&%$#_])/g, "\\$1")
    .replace(/[\r\n]+/g, " ");
}

/** Text inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ");
}
