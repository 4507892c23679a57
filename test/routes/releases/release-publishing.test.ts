import { beforeAll, describe, expect, it } from "vitest";
import { RELEASE_MEDIA_TYPES } from "../../../src/lib/negotiation";
import { LANDING_PAGE_CSP } from "../../../src/lib/release/landing-page";
import { me, patchMe } from "../../support/accounts";
import { api, expectProblem, roundTrips, rowsRead, textOf } from "../../support/http";
import {
  adminHeaders,
  contributor,
  createProduct,
  fileBytes,
  fileText,
  type ReleaseBody,
  referenceRow,
  requestRelease,
  settledRelease,
  sha256Hex,
  stagedRows,
} from "../../support/releases";

// A release's publishing side without DataCite (the default): CITATION.cff and the credited
// contributors in its files, the representations of its URL by content negotiation, each cached
// apart, and what opting out of credit changes (only later releases).
// DOIs: release-doi.datacite.test.ts. The formats read back by independent libraries:
// test/node/release/publishing.test.ts.

const TITLE = `Kettles </script><script>alert(1)</script> & <b>toasters</b> "{50%}"`;
let admin: Record<string, string>;
let ada: Awaited<ReturnType<typeof contributor>>;
let bob: Awaited<ReturnType<typeof contributor>>;
let first: ReleaseBody;
const ORCID = "0000-0002-1825-0097";

const read = (path: string, accept?: string, headers: Record<string, string> = {}) =>
  api(path, { headers: { ...(accept === undefined ? {} : { accept }), ...headers } });

beforeAll(async () => {
  admin = await adminHeaders();
  [ada, bob] = [await contributor("ada", true), await contributor("bob", true)];
  const cy = await contributor("cy", false);
  expect((await patchMe(ada.tokens.access_token, { orcid: ORCID, release_credit: true })).status).toBe(200);
  // Cy opts in but never accepted the contributor terms: not in the release, so not credited.
  expect((await patchMe(cy.tokens.access_token, { release_credit: true })).status).toBe(200);
  const kettles = await referenceRow("product_types", "Kettle <electric>");
  await createProduct(ada.headers, { name: "Kettle", product_type_id: kettles, weight_g: 1200 });
  await createProduct(bob.headers, { name: "Toaster", weight_g: 900 });
  await createProduct(cy.headers, { name: "Blender", weight_g: 1800 });
  expect((await requestRelease(admin, { version: "5.0", title: TITLE, description: "First <i>release</i>.\nTwo lines." })).status).toBe(
    202,
  );
  first = await settledRelease("5.0", admin);
  expect(first.status, first.failure_reason ?? "").toBe("published");
}, 90_000);

describe("ORCID iD and release credit on /users/me", () => {
  it("validates the ORCID iD by form and check digit, and takes release_credit as a boolean", async () => {
    for (const orcid of ["0000-0002-1825-0098", "0000000218250097", "https://orcid.org/0000-0002-1825-0097", "0000-0002-1825-009x"]) {
      const problem = await expectProblem(await patchMe(bob.tokens.access_token, { orcid }), 422, "VALIDATION_FAILED");
      expect(problem.errors?.map((e) => e.pointer)).toEqual(["/orcid"]);
    }
    await expectProblem(await patchMe(bob.tokens.access_token, { release_credit: "yes" }), 422, "VALIDATION_FAILED");
    const set = await patchMe(bob.tokens.access_token, { orcid: "0000-0002-1694-233X" });
    expect(await set.json()).toMatchObject({ orcid: "0000-0002-1694-233X", release_credit: false });
    expect(await (await patchMe(bob.tokens.access_token, { orcid: null })).json()).toMatchObject({ orcid: null });
    expect(await (await me(ada.tokens.access_token)).json()).toMatchObject({ orcid: ORCID, release_credit: true });
  });
});

describe("a release's files", () => {
  it("has no DOI without DataCite, and says so", async () => {
    expect(first).toMatchObject({ doi: null, concept_doi: null, doi_status: "disabled", doi_error: null });
    expect(first.citation).toBe(
      `relab (${first.snapshot_at!.slice(0, 4)}). Kettles </script><script>alert(1)</script> & <b>toasters</b> "{50%}" (Version 5.0) [Data set]. http://localhost/v1/releases/5.0`,
    );
  });

  it("holds CITATION.cff, listed in datapackage.json and SHA256SUMS, crediting only those who opted in", async () => {
    const cffFile = first.files.find((file) => file.path === "CITATION.cff")!;
    expect(cffFile).toMatchObject({ media_type: "application/yaml" });
    const cff = await fileText("5.0", "CITATION.cff");
    expect(await sha256Hex(new TextEncoder().encode(cff))).toBe(cffFile.sha256);
    expect(cff).toContain("cff-version: 1.2.0\n");
    expect(cff).toContain('title: "Kettles </script><script>alert(1)</script> & <b>toasters</b> \\"{50%}\\""\n');
    expect(cff).toContain(`  - alias: "${ada.username}"\n    orcid: "https://orcid.org/${ORCID}"\n`);
    expect(cff).not.toContain(bob.username);
    expect(cff).not.toContain("cy_");
    expect(cff).toContain('  - "Kettle <electric>"\n');
    const datapackage = JSON.parse(await fileText("5.0", "datapackage.json")) as {
      resources: { name: string; path: string; hash: string; bytes: number }[];
      contributors: { title: string; path?: string; roles: string[] }[];
    };
    expect(datapackage.resources.find((r) => r.path === "CITATION.cff")).toMatchObject({
      name: "citation",
      hash: `sha256:${cffFile.sha256}`,
      bytes: cffFile.bytes,
    });
    expect(datapackage.contributors).toEqual([
      { title: "relab", roles: ["creator"] },
      { title: "relab", roles: ["publisher"] },
      { title: ada.username, path: `https://orcid.org/${ORCID}`, roles: ["dataCollector"] },
    ]);
    expect(await fileText("5.0", "SHA256SUMS")).toContain(`${cffFile.sha256}  CITATION.cff\n`);
    const readme = await fileText("5.0", "README.md");
    expect(readme).toContain(`Collected with contributions from ${ada.username} ([ORCID ${ORCID}](https://orcid.org/${ORCID}))`);
  });
});

describe("content negotiation on the release's URL", () => {
  const checks: Record<string, (body: string) => void> = {
    "application/json": (body) => expect(JSON.parse(body)).toMatchObject({ version: "5.0", doi_status: "disabled" }),
    "text/html": (body) => expect(body).toMatch(/^<!doctype html>/),
    "application/ld+json": (body) => expect(JSON.parse(body)).toMatchObject({ "@type": "Dataset", name: TITLE, version: "5.0" }),
    "application/vnd.datacite.datacite+json": (body) =>
      expect(JSON.parse(body)).toMatchObject({ titles: [{ title: TITLE }], version: "5.0", types: { resourceTypeGeneral: "Dataset" } }),
    "application/vnd.citationstyles.csl+json": (body) => expect(JSON.parse(body)).toMatchObject({ type: "dataset", title: TITLE }),
    "application/x-bibtex": (body) => expect(body).toMatch(/^@misc\{relab_5_0,\n {2}author {4}= \{\{relab\}\},\n/),
    "application/x-research-info-systems": (body) => expect(body).toMatch(/^TY {2}- DATA\r\nTI {2}- Kettles/),
    "text/x-bibliography": (body) => expect(body).toBe(`${first.citation}\n`),
  };

  it("answers each representation with its type, `Vary: Accept`, in one round trip", async () => {
    for (const type of RELEASE_MEDIA_TYPES) {
      for (const path of ["/v1/releases/5.0", "/v1/releases/latest"]) {
        const response = await read(path, type);
        expect(response.status, `${path} ${type}`).toBe(200);
        expect(response.headers.get("content-type")?.split(";")[0]).toBe(type);
        expect(response.headers.get("vary")).toBe("Accept, Origin");
        expect(roundTrips(response)).toBeLessThanOrEqual(1);
        checks[type]!(await textOf(response));
      }
    }
  });

  it("reads the release, its files, credits and versions in one round trip whose rows do not grow with the image files", async () => {
    // Misses (each reader's first read of each representation): what a read costs without a copy.
    const costs: Record<string, [number, number]> = {};
    for (const type of ["application/json", "text/html", "application/x-bibtex"]) {
      const response = await read("/v1/releases/5.0", type, bob.headers);
      expect(response.headers.get("x-cache")).toBe("miss");
      costs[type] = [roundTrips(response), rowsRead(response)];
      await response.arrayBuffer();
    }
    for (const [type, [trips, rows]] of Object.entries(costs)) {
      expect(trips, type).toBe(1);
      // The release row, its ~20 file rows (an index range: the image files are not read; their
      // count and bytes are the row's, stamped at publication), credits, the release before it,
      // the versions (landing page), the token check and the validator.
      expect(rows, type).toBeLessThanOrEqual(40);
    }
  });

  it("honours quality values and wildcards, and answers 406 listing the types when none is acceptable", async () => {
    const chosen = async (accept: string) => (await read("/v1/releases/5.0", accept)).headers.get("content-type")?.split(";")[0];
    expect(await chosen("application/x-bibtex;q=0.4, text/x-bibliography;q=0.8, */*;q=0.1")).toBe("text/x-bibliography");
    expect(await chosen("*/*")).toBe("application/json");
    expect(await chosen("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")).toBe("text/html");
    expect(await chosen("text/*;q=0.5, text/html;q=0")).toBe("text/x-bibliography");
    for (const [path, accept] of [
      ["/v1/releases/5.0", "image/png"],
      ["/v1/releases/latest", "application/json;q=0"],
      ["/v1/releases/not a version", "text/plain"],
    ] as const) {
      const refused = await read(path, accept);
      const problem = await expectProblem(refused, 406, "NOT_ACCEPTABLE");
      for (const type of RELEASE_MEDIA_TYPES) expect(problem.detail).toContain(type);
    }
  });

  it("serves a landing page that escapes every value and embeds the JSON-LD the ld+json representation gives", async () => {
    const page = await read("/v1/releases/5.0", "text/html");
    expect(page.headers.get("content-security-policy")).toBe(LANDING_PAGE_CSP);
    const html = await page.text();
    expect(html).toContain(
      `<h1 id="title">Kettles &#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62; &#38; &#60;b&#62;toasters&#60;/b&#62; &#34;{50%}&#34;</h1>`,
    );
    expect(html).not.toContain("<b>toasters</b>");
    const embedded = /<script type="application\/ld\+json">([^<]*)<\/script>/.exec(html)?.[1];
    const jsonLd = await (await read("/v1/releases/5.0", "application/ld+json")).json();
    expect(JSON.parse(embedded!)).toEqual(jsonLd);
    for (const file of first.files) {
      expect(html).toContain(file.sha256);
      expect(html).toContain(`href="${file.url}"`);
    }
    expect(html).toContain(`${ada.username} (ORCID <a href="https://orcid.org/${ORCID}">${ORCID}</a>)`);
    expect(html).toContain('pd.read_parquet("http://localhost/v1/releases/5.0/files/records.parquet")');
    expect(html).toContain("<strong>5.0</strong> (this version)");
  });

  it("keeps one cached copy per representation: none is served for another", async () => {
    const types = ["application/json", "text/html", "application/x-bibtex", "application/ld+json"];
    const firsts = new Map<string, string>();
    for (let round = 0; round < 4; round++) {
      for (const type of types) {
        const response = await read("/v1/releases/5.0", type, { "cf-connecting-ip": "10.33.0.1" });
        expect(response.headers.get("content-type")?.split(";")[0], `round ${round}, ${type}`).toBe(type);
        if (round > 0) expect(response.headers.get("x-cache")).toBe("hit");
        // The copy keeps the route's own headers.
        expect(response.headers.get("vary")).toBe("Accept, Origin");
        expect(response.headers.get("content-security-policy")).toEqual(
          type === "text/html" ? LANDING_PAGE_CSP : expect.stringContaining("default-src 'none'"),
        );
        const body = await textOf(response);
        if (round === 0) firsts.set(type, body);
        else expect(body, `round ${round}, ${type}`).toBe(firsts.get(type));
      }
    }
    // The same copies for a signed-in reader are their own (and hold no doi_error for others).
    const signedIn = await read("/v1/releases/5.0", "text/html", ada.headers);
    expect(signedIn.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });
});

describe("a later release", () => {
  it("credits only those opted in at its snapshot; published ones never change; every representation sees it at once", async () => {
    const cffBefore = await fileBytes("5.0", "CITATION.cff");
    const pageBefore = await (await read("/v1/releases/5.0", "text/html")).text();
    expect(pageBefore).not.toContain("5.1");
    const latestBefore = await textOf(await read("/v1/releases/latest", "application/x-bibtex"));
    expect(latestBefore).toContain("version   = {5.0}");

    expect((await patchMe(ada.tokens.access_token, { release_credit: false })).status).toBe(200);
    expect((await requestRelease(admin, { version: "5.1", title: "Second" })).status).toBe(202);
    const second = await settledRelease("5.1", admin);
    expect(second.status).toBe("published");
    const cff = await fileText("5.1", "CITATION.cff");
    expect(cff).not.toContain(ada.username);
    expect(cff).toContain('authors:\n  - name: "relab"\n');
    expect(cff).not.toContain("  - alias:");
    // The earlier release, byte for byte.
    expect(await fileBytes("5.0", "CITATION.cff")).toEqual(cffBefore);
    expect((await fileText("5.0", "CITATION.cff")).includes(ada.username)).toBe(true);

    const page = await (await read("/v1/releases/5.0", "text/html")).text();
    expect(page).toContain('<a href="http://localhost/v1/releases/5.1">5.1</a>');
    expect(await textOf(await read("/v1/releases/latest", "application/x-bibtex"))).toContain("version   = {5.1}");
    const dataciteJson = (await (await read("/v1/releases/5.1", "application/vnd.datacite.datacite+json")).json()) as {
      relatedIdentifiers: unknown[];
      contributors: unknown[];
    };
    // No DOIs here: the previous release by its URL, and no concept.
    expect(dataciteJson.relatedIdentifiers).toEqual([
      { relatedIdentifier: "http://localhost/v1/releases/5.0", relatedIdentifierType: "URL", relationType: "IsNewVersionOf" },
    ]);
    expect(dataciteJson.contributors).toEqual([]);
    // Its clean-up message has run: no queue work of this file is left for the next one in this runtime.
    const deadline = Date.now() + 20_000;
    while ((await stagedRows("5.1")) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await stagedRows("5.1")).toBe(0);
  });
});
