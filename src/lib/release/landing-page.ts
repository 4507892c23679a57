import { sha256 } from "@noble/hashes/sha2.js";
import { citationText } from "./citations";
import { describedAs, doiUrl, isoDate, type ReleaseDescription } from "./publication";
import { schemaOrgDataset, scriptSafeJson } from "./schema-org";

/**
 * The landing page of a release (`GET /v1/releases/{version}` with `Accept: text/html`): one
 * self-contained document, its style and script inline and admitted by their hashes in its CSP,
 * nothing loaded from anywhere. Every value is escaped for where it goes: element text and
 * attribute values by `html()`, the JSON-LD inside its script element by `scriptSafeJson()`.
 */

/** Another published release, for the page's list of versions. */
export interface OtherVersion {
  readonly version: string;
  readonly title: string;
  readonly publishedAt: number;
  readonly doi: string | null;
  readonly url: string;
}

export interface LandingPageInput {
  readonly release: ReleaseDescription;
  /** Every published release, newest first (the page's own among them). */
  readonly versions: readonly OtherVersion[];
  /** `registered`, `pending`, `failed` or `disabled`: what the page says about a DOI not (yet) there. */
  readonly doiStatus: string;
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
h1{font-size:1.7rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
.meta{color:#555}table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #eee;vertical-align:top}
td.n{text-align:right;white-space:nowrap}code,pre{font-family:ui-monospace,monospace;font-size:.85rem}code.hash{word-break:break-all;color:#555}
pre{background:#f5f5f5;padding:.7rem;overflow-x:auto}blockquote{margin:0;padding:.6rem 1rem;border-left:4px solid #3a7;background:#f4faf6}
button{margin-top:.5rem;font:inherit;padding:.2rem .8rem}.description{white-space:pre-wrap}
`;

// Shows the copy button (the page works without script; the button needs it) and copies the
// citation, or selects it where the clipboard is not available.
const SCRIPT = `
const button = document.getElementById("copy-citation");
const status = document.getElementById("copy-status");
const citation = document.getElementById("citation");
button.hidden = false;
button.addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(citation.textContent);
    status.textContent = "Copied.";
  } catch {
    const range = document.createRange();
    range.selectNodeContents(citation);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    status.textContent = "Selected: copy it with Ctrl+C or Cmd+C.";
  }
});
`;

const hashOf = (text: string) => {
  let binary = "";
  for (const byte of sha256(new TextEncoder().encode(text))) binary += String.fromCharCode(byte);
  return `'sha256-${btoa(binary)}'`;
};

/** The page's Content-Security-Policy: its own inline style and script (by hash), nothing else. */
export const LANDING_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${hashOf(STYLE)}`,
  `script-src ${hashOf(SCRIPT)}`,
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Text for HTML element content and double-quoted attribute values. */
export function html(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const number = (n: number) => n.toLocaleString("en-US");

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

const link = (href: string, text: string) => `<a href="${html(href)}">${html(text)}</a>`;

function doiLine(release: ReleaseDescription, doiStatus: string): string {
  if (release.doi) return `DOI ${link(doiUrl(release.doi), release.doi)}`;
  if (doiStatus === "pending") return "DOI: being registered";
  if (doiStatus === "failed") return "DOI: registration failed, to be retried";
  return "No DOI";
}

export function landingPage({ release, versions, doiStatus }: LandingPageInput): string {
  const { counts, licence } = release;
  const published = release.publishedAt === null ? "not published" : `published ${isoDate(release.publishedAt)}`;
  const parquet =
    release.files.find((file) => file.path === "records.parquet") ?? release.files.find((file) => file.path.endsWith(".parquet"));
  const csv = release.files.find((file) => file.path === "records.csv") ?? release.files.find((file) => file.path.endsWith(".csv"));
  const files = release.files
    .map(
      (file) =>
        `<tr><td>${link(file.url, file.path)}</td><td>${html(file.mediaType)}</td><td class="n">${html(size(file.bytes))}</td><td><code class="hash">${html(file.sha256)}</code></td></tr>`,
    )
    .join("\n");
  const credits = release.credits
    .map((credit) =>
      credit.orcid ? `${html(credit.username)} (ORCID ${link(`https://orcid.org/${credit.orcid}`, credit.orcid)})` : html(credit.username),
    )
    .join(", ");
  const versionRows = versions
    .map((other) => {
      const current = other.version === release.version;
      const name = current ? `<strong>${html(other.version)}</strong> (this version)` : link(other.url, other.version);
      return `<tr><td>${name}</td><td>${html(other.title)}</td><td>${html(isoDate(other.publishedAt))}</td><td>${other.doi ? link(doiUrl(other.doi), other.doi) : ""}</td></tr>`;
    })
    .join("\n");
  const curl = (type: string) => `curl -H 'Accept: ${type}' ${release.url}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(release.title)} (version ${html(release.version)}) · ${html(release.publisher)}</title>
<meta name="description" content="${html(describedAs(release).slice(0, 300))}">
<link rel="canonical" href="${html(release.url)}">
<style>${STYLE}</style>
<script type="application/ld+json">${scriptSafeJson(schemaOrgDataset(release))}</script>
</head>
<body>
<main>
<h1 id="title">${html(release.title)}</h1>
<p class="meta">Version <span id="version">${html(release.version)}</span> · ${html(published)} · ${html(release.publisher)} · <span id="doi">${doiLine(release, doiStatus)}</span>${
    release.conceptDoi ? ` · all versions: ${link(doiUrl(release.conceptDoi), release.conceptDoi)}` : ""
  }</p>

<h2>Cite</h2>
<blockquote id="citation">${html(citationText(release))}</blockquote>
<button type="button" id="copy-citation" hidden>Copy citation</button> <span id="copy-status" role="status"></span>
<p>The same address gives BibTeX, RIS, CSL-JSON, DataCite JSON and schema.org JSON-LD by content negotiation:</p>
<pre>${html(curl("application/x-bibtex"))}</pre>

<h2>Licence</h2>
<p id="licence">${link(licence.path, licence.title)} (<code>${html(licence.name)}</code>)</p>

<h2>About</h2>
<p class="description" id="description">${html(describedAs(release))}</p>
<table id="counts">
<tr><th>records (base products and components)</th><td class="n">${number(counts.records)}</td></tr>
<tr><th>base products</th><td class="n">${number(counts.baseProducts)}</td></tr>
<tr><th>bill-of-materials rows</th><td class="n">${number(counts.recordMaterials)}</td></tr>
<tr><th>images</th><td class="n">${number(counts.images)}</td></tr>
</table>
<p>Data as of ${html(new Date(release.snapshotAt * 1000).toISOString().replace(".000Z", "Z"))}. A published release never changes.</p>
${credits ? `<p id="credits">Collected with contributions from ${credits}; every other contributor appears under a pseudonym.</p>` : ""}

<h2>Files</h2>
<table id="files">
<thead><tr><th>file</th><th>type</th><th>size</th><th>SHA-256</th></tr></thead>
<tbody>
${files}
</tbody>
</table>
${release.imageFiles.count > 0 ? `<p>And ${number(release.imageFiles.count)} image files (${html(size(release.imageFiles.bytes))}), listed with their SHA-256 in <code>images.csv</code>.</p>` : ""}
<p>Check a download with <code>sha256sum -c SHA256SUMS --ignore-missing</code>.</p>

<h2>Load</h2>
<pre id="pandas">import pandas as pd
records = pd.read_parquet("${html(parquet?.url ?? "")}")
table = pd.read_csv("${html(csv?.url ?? "")}")</pre>
<pre id="duckdb">-- DuckDB reads Parquet over HTTP, only the parts a query needs
SELECT count(*) FROM '${html(parquet?.url ?? "")}';</pre>

<h2>Versions</h2>
<table id="versions">
<thead><tr><th>version</th><th>title</th><th>published</th><th>DOI</th></tr></thead>
<tbody>
${versionRows}
</tbody>
</table>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
