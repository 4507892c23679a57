import { Cite } from "@citation-js/core";
import { parse as parseBibtex } from "@retorquere/bibtex-parser";
import "@citation-js/plugin-bibtex";
import "@citation-js/plugin-ris";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { citationCff, yamlString } from "../../../src/lib/release/citation-cff.ts";
import { bibtex, citationText, cslJson, ris } from "../../../src/lib/release/citations.ts";
import { conceptRecord, dataciteJson, versionRecord } from "../../../src/lib/release/datacite.ts";
import { html, LANDING_PAGE_CSP, landingPage } from "../../../src/lib/release/landing-page.ts";
import { licence } from "../../../src/lib/release/licences.ts";
import type { ReleaseDescription } from "../../../src/lib/release/publication.ts";
import { schemaOrgDataset, scriptSafeJson } from "../../../src/lib/release/schema-org.ts";

// The citation formats, metadata records and landing page of src/lib/release/, read back by
// libraries that had no part in writing them (citation-js, @retorquere/bibtex-parser, yaml), with
// values that break naive writers: markup, `</script>`, TeX's special characters, quotes, line
// breaks and characters outside ASCII.

const NASTY_TITLE = `Kettles & toasters </script><script>alert("x")</script> {50%} $1 #2 a_b ~c ^d \\e "quoted" 'single' — Müller 東京 🙂`;
const NASTY_DESCRIPTION = "Line one <b>bold</b>\nline two\r\n\ttabbed & <!-- comment --> ]]> \u2028 separator";

function release(overrides: Partial<ReleaseDescription> = {}): ReleaseDescription {
  return {
    version: "2026.1-RC",
    title: NASTY_TITLE,
    description: NASTY_DESCRIPTION,
    licence: licence("CC-BY-4.0"),
    publisher: "relab",
    creator: { name: "Reverse Engineering Lab", ror: "https://ror.org/05xg72x27" },
    url: "https://api.relab.example/v1/releases/2026.1-RC",
    snapshotAt: Date.UTC(2026, 4, 1, 12, 0, 0) / 1000,
    publishedAt: Date.UTC(2026, 4, 1, 12, 3, 0) / 1000,
    doi: "10.80001/relab.2026.1-rc",
    conceptDoi: "10.80001/relab.all",
    counts: { records: 5, baseProducts: 2, images: 2, recordMaterials: 3 },
    subjects: ["Kettle", "Toaster <oven>"],
    credits: [
      { username: "ada_l", orcid: "0000-0002-1825-0097" },
      { username: "cy<script>", orcid: null },
    ],
    files: [
      {
        path: "records.csv",
        bytes: 1234,
        sha256: "a".repeat(64),
        mediaType: "text/csv",
        url: "https://api.relab.example/v1/releases/2026.1-RC/files/records.csv",
      },
      {
        path: "records.parquet",
        bytes: 999,
        sha256: "b".repeat(64),
        mediaType: "application/vnd.apache.parquet",
        url: "https://api.relab.example/v1/releases/2026.1-RC/files/records.parquet",
      },
    ],
    imageFiles: { count: 2, bytes: 4096 },
    previous: { version: "2025.9", url: "https://api.relab.example/v1/releases/2025.9", doi: "10.80001/relab.2025.9" },
    catalogue: { name: "relab dataset releases", url: "https://api.relab.example/v1/releases" },
    ...overrides,
  };
}

describe("BibTeX", () => {
  it("is read back by @retorquere/bibtex-parser with every value as written", () => {
    // Without its default of turning titles into sentence case (a Zotero import's wish, not the entry's).
    const parsed = parseBibtex(bibtex(release()), { sentenceCase: false });
    expect(parsed.errors).toEqual([]);
    expect(parsed.entries).toHaveLength(1);
    const entry = parsed.entries[0]!;
    expect(entry.type).toBe("misc");
    expect(entry.key).toBe("relab_2026_1_rc");
    // One line, as a citation field is; the title otherwise exactly (TeX commands back to characters).
    expect(entry.fields.title).toBe(NASTY_TITLE);
    expect(entry.fields.author).toEqual([{ name: "Reverse Engineering Lab" }]);
    expect(entry.fields.year).toBe("2026");
    expect(entry.fields.doi).toBe("10.80001/relab.2026.1-rc");
    expect(entry.fields.url).toBe("https://doi.org/10.80001/relab.2026.1-rc");
    expect(entry.fields.version).toBe("2026.1-RC");
  });

  it("is read back by citation-js as the same data set", async () => {
    const [item] = (await Cite.async(bibtex(release()))).data as Record<string, unknown>[];
    expect(item).toMatchObject({
      title: NASTY_TITLE,
      DOI: "10.80001/relab.2026.1-rc",
      publisher: "relab",
      issued: { "date-parts": [[2026]] },
    });
    // The braced corporate name as one name part, never split into given and family names.
    expect(item!.author).toEqual([{ family: "Reverse Engineering Lab" }]);
  });

  it("names the release's URL when it has no DOI yet", () => {
    const entry = parseBibtex(bibtex(release({ doi: null }))).entries[0]!;
    expect(entry.fields.doi).toBeUndefined();
    expect(entry.fields.url).toBe("https://api.relab.example/v1/releases/2026.1-RC");
  });
});

describe("RIS", () => {
  it("is read back by citation-js: a data set with its title, creator, year, DOI and URL", async () => {
    const text = ris(release());
    expect(text.startsWith("TY  - DATA\r\n")).toBe(true);
    expect(text.endsWith("ER  - \r\n")).toBe(true);
    // Every line a tag, two spaces, a hyphen and a space: no value broke onto a line of its own.
    for (const line of text.slice(0, -2).split("\r\n")) expect(line).toMatch(/^[A-Z][A-Z0-9] {2}- /);
    const [item] = (await Cite.async(text)).data as Record<string, unknown>[];
    expect(item).toMatchObject({ type: "dataset", title: NASTY_TITLE.replace(/\s+/g, " "), issued: { "date-parts": [[2026, 5, 1]] } });
    expect(JSON.stringify(item)).toContain("Reverse Engineering Lab");
    expect(text).toContain("DO  - 10.80001/relab.2026.1-rc\r\n");
    expect(text).toContain("UR  - https://doi.org/10.80001/relab.2026.1-rc\r\n");
  });
});

describe("CSL-JSON", () => {
  it("is one item citation-js reads as it is", async () => {
    const csl = cslJson(release());
    const [item] = (await Cite.async(JSON.parse(JSON.stringify(csl)))).data as Record<string, unknown>[];
    expect(item).toMatchObject({
      type: "dataset",
      title: NASTY_TITLE,
      version: "2026.1-RC",
      publisher: "relab",
      DOI: "10.80001/relab.2026.1-rc",
      URL: "https://doi.org/10.80001/relab.2026.1-rc",
      issued: { "date-parts": [[2026, 5, 1]] },
    });
    expect(item!.author).toEqual([{ literal: "Reverse Engineering Lab" }]);
  });
});

describe("the formatted reference", () => {
  it("is the APA data-set form, naming the DOI, and the publisher only when it is not the creator", () => {
    expect(citationText(release({ title: "relab dataset" }))).toBe(
      "Reverse Engineering Lab (2026). relab dataset (Version 2026.1-RC) [Data set]. relab. https://doi.org/10.80001/relab.2026.1-rc",
    );
    expect(citationText(release({ title: "relab dataset", creator: { name: "relab", ror: null }, doi: null }))).toBe(
      "relab (2026). relab dataset (Version 2026.1-RC) [Data set]. https://api.relab.example/v1/releases/2026.1-RC",
    );
  });
});

describe("CITATION.cff", () => {
  it("is Citation File Format 1.2.0 that a YAML parser reads back exactly", () => {
    const cff = parseYaml(citationCff(release())) as Record<string, unknown>;
    // The schema's required keys, and nothing outside its top-level properties.
    for (const key of ["cff-version", "message", "title", "authors"]) expect(cff).toHaveProperty(key);
    const allowed = new Set([
      "abstract",
      "authors",
      "cff-version",
      "commit",
      "contact",
      "date-released",
      "doi",
      "identifiers",
      "keywords",
      "license",
      "license-url",
      "message",
      "preferred-citation",
      "references",
      "repository",
      "repository-artifact",
      "repository-code",
      "title",
      "type",
      "url",
      "version",
    ]);
    for (const key of Object.keys(cff)) expect(allowed.has(key), key).toBe(true);
    expect(cff["cff-version"]).toBe("1.2.0");
    expect(cff.type).toBe("dataset");
    expect(cff.title).toBe(NASTY_TITLE);
    expect(cff.version).toBe("2026.1-RC");
    expect(cff["date-released"]).toMatch(/^[0-9]{4}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])$/);
    expect(cff.doi).toMatch(/^10\.\d{4,9}(\.\d+)?\/[A-Za-z0-9:/_;\-.()[\]\\]+$/);
    expect(cff.license).toBe("CC-BY-4.0");
    expect(String(cff.abstract)).toContain(NASTY_DESCRIPTION);
    // The creator as an entity, then each credited contributor as a person with an alias (and ORCID).
    expect(cff.authors).toEqual([
      { name: "Reverse Engineering Lab", website: "https://ror.org/05xg72x27" },
      { alias: "ada_l", orcid: "https://orcid.org/0000-0002-1825-0097" },
      { alias: "cy<script>" },
    ]);
    for (const person of (cff.authors as Record<string, string>[]).slice(1)) {
      if (person.orcid) expect(person.orcid).toMatch(/^https:\/\/orcid\.org\/[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$/);
    }
    expect(cff.identifiers).toEqual([
      { type: "doi", value: "10.80001/relab.2026.1-rc", description: "This version" },
      { type: "doi", value: "10.80001/relab.all", description: "All versions" },
      { type: "url", value: "https://api.relab.example/v1/releases/2026.1-RC", description: "This version's landing page and metadata" },
    ]);
    expect(cff.keywords).toContain("Toaster <oven>");
  });

  it("escapes what YAML cannot carry as it is", () => {
    for (const text of ['a "b" \\c', "line\nbreak\r\n", "tab\there", "\u2028\u2029\ufeff\u0085\u007f", "東京 🙂", "- dash: colon # hash"]) {
      expect(parseYaml(`value: ${yamlString(text)}`)).toEqual({ value: text });
    }
  });
});

describe("DataCite Metadata Schema 4", () => {
  it("has only true relations: the concept, and the previous release by its DOI, or its URL when it has none", () => {
    const record = versionRecord(release(), "10.80001/relab.2026.1-rc", "10.80001/relab.all");
    expect(record.relatedIdentifiers).toEqual([
      { relatedIdentifier: "10.80001/relab.all", relatedIdentifierType: "DOI", relationType: "IsVersionOf" },
      { relatedIdentifier: "10.80001/relab.2025.9", relatedIdentifierType: "DOI", relationType: "IsNewVersionOf" },
    ]);
    const first = versionRecord(release({ previous: null }), "10.80001/relab.2026.1-rc", "10.80001/relab.all");
    expect(first.relatedIdentifiers).toEqual([
      { relatedIdentifier: "10.80001/relab.all", relatedIdentifierType: "DOI", relationType: "IsVersionOf" },
    ]);
    const unregistered = versionRecord(
      release({ previous: { version: "2025.9", url: "https://x.example/v1/releases/2025.9", doi: null } }),
      null,
      null,
    );
    expect(unregistered.relatedIdentifiers).toEqual([
      { relatedIdentifier: "https://x.example/v1/releases/2025.9", relatedIdentifierType: "URL", relationType: "IsNewVersionOf" },
    ]);
    expect(unregistered.doi).toBeUndefined();
    const concept = conceptRecord(release(), "10.80001/relab.all", ["10.80001/relab.2025.9", "10.80001/relab.2026.1-rc"]);
    expect(concept.version).toBeUndefined();
    expect(concept.relatedIdentifiers.map((r) => r.relationType)).toEqual(["HasVersion", "HasVersion"]);
  });

  it("holds the mandatory and recommended properties, credits as DataCollectors with their ORCID, subjects from the product types", () => {
    const record = dataciteJson(release()) as unknown as ReturnType<typeof versionRecord> & { id: string };
    expect(record.id).toBe("https://doi.org/10.80001/relab.2026.1-rc");
    expect(record).toMatchObject({
      types: { resourceTypeGeneral: "Dataset" },
      titles: [{ title: NASTY_TITLE }],
      publisher: "relab",
      publicationYear: 2026,
      version: "2026.1-RC",
      rightsList: [{ rightsIdentifier: "CC-BY-4.0", rightsIdentifierScheme: "SPDX" }],
      descriptions: [{ descriptionType: "Abstract" }],
      creators: [{ name: "Reverse Engineering Lab", nameType: "Organizational", nameIdentifiers: [{ nameIdentifierScheme: "ROR" }] }],
      contributors: [
        {
          name: "ada_l",
          contributorType: "DataCollector",
          nameIdentifiers: [{ nameIdentifier: "https://orcid.org/0000-0002-1825-0097", nameIdentifierScheme: "ORCID" }],
        },
        { name: "cy<script>", contributorType: "DataCollector", nameIdentifiers: [] },
      ],
    });
    expect(record.subjects.map((s) => s.subject)).toEqual(expect.arrayContaining(["Kettle", "Toaster <oven>"]));
    expect(record.formats).toEqual(["application/vnd.apache.parquet", "text/csv"]);
    expect(record.sizes).toContain("5 records");
    expect(record.dates).toEqual([
      { date: "2026-05-01", dateType: "Created" },
      { date: "2026-05-01", dateType: "Issued" },
    ]);
  });
});

/** schema.org Dataset: what dataset search engines require (name, description) and recommend. */
function expectSearchableDataset(dataset: Record<string, unknown>): void {
  expect(dataset["@context"]).toBe("https://schema.org");
  expect(dataset["@type"]).toBe("Dataset");
  expect(typeof dataset.name).toBe("string");
  expect(String(dataset.description).length).toBeGreaterThanOrEqual(50);
  expect(String(dataset.description).length).toBeLessThanOrEqual(5000);
  for (const property of ["url", "version", "license", "datePublished"]) expect(typeof dataset[property], property).toBe("string");
  expect(dataset.url).toMatch(/^https?:\/\//);
  expect(dataset.license).toMatch(/^https:\/\//);
  expect(dataset.datePublished).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(Array.isArray(dataset.identifier) && (dataset.identifier as unknown[]).length > 0).toBe(true);
  expect(dataset.isAccessibleForFree).toBe(true);
  for (const party of [dataset.creator, dataset.publisher]) {
    expect(party).toMatchObject({ "@type": expect.stringMatching(/^(Organization|Person)$/), name: expect.any(String) });
  }
  expect(dataset.includedInDataCatalog).toMatchObject({ "@type": "DataCatalog", name: expect.any(String), url: expect.any(String) });
  const distribution = dataset.distribution as Record<string, unknown>[];
  expect(distribution.length).toBeGreaterThan(0);
  for (const download of distribution) {
    expect(download["@type"]).toBe("DataDownload");
    expect(download.contentUrl).toMatch(/^https?:\/\//);
    expect(download.encodingFormat).toMatch(/^[a-z]+\/[a-z0-9.+-]+$/);
    expect(download.contentSize).toMatch(/^\d+ B$/);
  }
}

describe("schema.org JSON-LD and the landing page", () => {
  it("describes a Dataset with the properties search engines require and recommend", () => {
    const dataset = schemaOrgDataset(release());
    expectSearchableDataset(dataset);
    expect(dataset.identifier).toEqual(["https://doi.org/10.80001/relab.2026.1-rc", "https://api.relab.example/v1/releases/2026.1-RC"]);
    expect(dataset.contributor).toEqual([
      {
        "@type": "Person",
        name: "ada_l",
        identifier: "https://orcid.org/0000-0002-1825-0097",
        sameAs: "https://orcid.org/0000-0002-1825-0097",
      },
      { "@type": "Person", name: "cy<script>" },
    ]);
    // Without a description of its own, or with a short one, the description is still long enough.
    expectSearchableDataset(schemaOrgDataset(release({ description: null })));
    expectSearchableDataset(schemaOrgDataset(release({ description: "Short." })));
  });

  it("embeds the JSON-LD so that no value can end the script element, and the page escapes every value", () => {
    const page = landingPage({ release: release(), versions: [], doiStatus: "registered" });
    const scripts = [...page.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(JSON.parse(scripts[0]![1]!)).toEqual(schemaOrgDataset(release()));
    // The only script elements are the JSON-LD and the page's own.
    expect(page.match(/<script/g)).toHaveLength(2);
    expect(page).not.toContain("<b>bold</b>");
    expect(page).not.toContain('alert("x")</script>');
    expect(page).toContain(html(NASTY_TITLE));
    expect(scriptSafeJson({ a: "</script><!--\u2028&" })).toBe('{"a":"\\u003c/script\\u003e\\u003c!--\\u2028\\u0026"}');
    expect(html(`<a href="x" onclick='y'>&</a>`)).toBe("&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;&#60;/a&#62;");
  });

  it("admits only its own inline style and script, by hash", () => {
    expect(LANDING_PAGE_CSP).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; script-src 'sha256-[A-Za-z0-9+/]+=*'; /);
    expect(LANDING_PAGE_CSP).not.toContain("unsafe");
  });
});
