import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_DOI_ATTEMPTS } from "../../../src/services/releases/doi";
import { bearer, patchMe, verifiedUser } from "../../support/accounts";
import { FAKE_DATACITE } from "../../support/fake-upstream-config";
import { api, expectProblem, textOf } from "../../support/http";
import {
  adminHeaders,
  contributor,
  createProduct,
  fileText,
  type ReleaseBody,
  readRelease,
  referenceRow,
  requestRelease,
  runReleaseMessage,
  settledRelease,
} from "../../support/releases";

// DOIs through DataCite (decisions.md, "Publishing releases"), against the fake DataCite of
// test/support/fake-datacite.ts, which checks every request against the REST API's JSON:API
// shape and Metadata Schema 4. This project's runtime has DataCite configured (vitest.config.ts,
// DATACITE_TEST_VARS), so releases built here register their DOIs on the real release queue.
// The failure modes drive one registration attempt at a time through the queue's consumer.

const PREFIX = FAKE_DATACITE.prefix;
const CONCEPT = `${PREFIX}/relab.all`;
const ORCID = "0000-0001-5109-3700";
let admin: Record<string, string>;
let ada: Awaited<ReturnType<typeof contributor>>;

// biome-ignore lint/suspicious/noExplicitAny: DataCite's records are checked member by member
type Attributes = Record<string, any>;

/** The fake's record of a DOI, read as anyone reads a findable DOI; null when it has none. */
async function dataCite(doi: string): Promise<Attributes | null> {
  const response = await fetch(`${FAKE_DATACITE.apiUrl}/dois/${doi}`);
  if (response.status === 404) return null;
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { attributes: Attributes } }).data.attributes;
}

async function fakeLog(): Promise<{ method: string; path: string; doi: string | null; status: number }[]> {
  return (await fetch(`${FAKE_DATACITE.apiUrl}/__fake/log`)).json();
}

async function setMode(doi: string, mode: "ok" | "down") {
  expect((await fetch(`${FAKE_DATACITE.apiUrl}/__fake/dois/${doi}`, { method: "PUT", body: JSON.stringify({ mode }) })).status).toBe(204);
}

/** Polls a release (as a superuser) until its registration is no longer pending, or `until` holds. */
async function doiSettled(
  version: string,
  until: (release: ReleaseBody) => boolean = (r) => r.doi_status !== "pending",
): Promise<ReleaseBody> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const release = (await (await readRelease(version, admin)).json()) as ReleaseBody;
    if (until(release)) return release;
    if (Date.now() > deadline) throw new Error(`release ${version}: DOI still ${release.doi_status} (${release.doi_error})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A published release as a row (all the registration reads), its registration pending. Created
 * a minute on, so it is newer than the releases earlier tests built (within one second the newest
 * is the greatest version as text, "33.3" after "33.12"), and the concept DOI is not given the
 * title of one whose title asks the fake to be down.
 */
async function publishedRow(version: string, title: string) {
  const at = Math.floor(Date.now() / 1000) + 60;
  await env.DB.prepare(
    `INSERT INTO releases (version, title, licence, status, base_url, build_id, snapshot_at, published_at, records, base_products, images,
       record_materials, doi_status, doi_updated_at, publisher, created_at)
       VALUES (?, ?, 'CC-BY-4.0', 'published', 'http://localhost', 'row', ?, ?, 0, 0, 0, 0, 'pending', ?, 'relab', ?)`,
  )
    .bind(version, title, at, at, at, at)
    .run();
}

const attempt = (version: string, vars: Record<string, string> = {}) => runReleaseMessage({ type: "release.doi", version }, vars);

const row = (version: string) =>
  env.DB.prepare("SELECT doi_status, doi_error, doi_attempts, doi FROM releases WHERE version = ?")
    .bind(version)
    .first<{ doi_status: string; doi_error: string | null; doi_attempts: number; doi: string | null }>();

beforeAll(async () => {
  admin = await adminHeaders();
  ada = await contributor("ada", true);
  expect((await patchMe(ada.tokens.access_token, { orcid: ORCID, release_credit: true })).status).toBe(200);
  const kettles = await referenceRow("product_types", "Kettle");
  await createProduct(ada.headers, { name: "Kettle", product_type_id: kettles, weight_g: 1200 });
}, 30_000);

describe("DOIs of releases built on the queue", () => {
  it("registers the version DOI as findable with Metadata Schema 4 metadata, and creates the concept DOI", {
    timeout: 90_000,
  }, async () => {
    expect(
      (await requestRelease(admin, { version: "33.1", title: "DOI test release", description: "The first, with a DOI." })).status,
    ).toBe(202);
    const published = await settledRelease("33.1", admin);
    expect(published.status).toBe("published");
    const release = await doiSettled("33.1");
    expect(release).toMatchObject({ doi_status: "registered", doi: `${PREFIX}/relab.33.1`, concept_doi: CONCEPT, doi_error: null });
    expect(release.citation).toBe(
      `Reverse Engineering Lab (tests) (${release.snapshot_at!.slice(0, 4)}). DOI test release (Version 33.1) [Data set]. relab test publisher. https://doi.org/${PREFIX}/relab.33.1`,
    );

    const record = (await dataCite(`${PREFIX}/relab.33.1`))!;
    expect(record).toMatchObject({
      state: "findable",
      url: "http://localhost/v1/releases/33.1",
      types: { resourceTypeGeneral: "Dataset" },
      titles: [{ title: "DOI test release" }],
      publisher: "relab test publisher",
      version: "33.1",
      creators: [
        {
          name: "Reverse Engineering Lab (tests)",
          nameType: "Organizational",
          nameIdentifiers: [{ nameIdentifier: "https://ror.org/05xg72x27", nameIdentifierScheme: "ROR", schemeUri: "https://ror.org" }],
        },
      ],
      contributors: [
        {
          name: ada.username,
          contributorType: "DataCollector",
          nameIdentifiers: [
            { nameIdentifier: `https://orcid.org/${ORCID}`, nameIdentifierScheme: "ORCID", schemeUri: "https://orcid.org" },
          ],
        },
      ],
      rightsList: [{ rightsIdentifier: "CC-BY-4.0" }],
    });
    expect(record.descriptions).toEqual([{ description: expect.stringContaining("The first, with a DOI."), descriptionType: "Abstract" }]);
    expect(record.subjects).toContainEqual({ subject: "Kettle" });
    expect(record.formats).toContain("application/vnd.apache.parquet");
    expect(record.sizes).toContain("1 record");
    // The first release: a version of the concept, a new version of nothing.
    expect(record.relatedIdentifiers).toEqual([{ relatedIdentifier: CONCEPT, relatedIdentifierType: "DOI", relationType: "IsVersionOf" }]);
    const concept = (await dataCite(CONCEPT))!;
    expect(concept).toMatchObject({ state: "findable", url: "http://localhost/v1/releases/33.1", titles: [{ title: "DOI test release" }] });
    expect(concept.version).toBeUndefined();
    expect(concept.relatedIdentifiers).toEqual([
      { relatedIdentifier: `${PREFIX}/relab.33.1`, relatedIdentifierType: "DOI", relationType: "HasVersion" },
    ]);

    // Its files name the DOIs it is now registered under.
    const cff = await fileText("33.1", "CITATION.cff");
    expect(cff).toContain(`doi: "${PREFIX}/relab.33.1"\n`);
    expect(cff).toContain(`  - type: doi\n    value: "${CONCEPT}"\n    description: "All versions"\n`);
    expect(await fileText("33.1", "README.md")).toContain(`https://doi.org/${PREFIX}/relab.33.1`);
    const bibtex = await textOf(await api("/v1/releases/33.1", { headers: { accept: "application/x-bibtex" } }));
    expect(bibtex).toContain(`  doi       = {${PREFIX}/relab.33.1},\n`);
    const page = await (await api("/v1/releases/33.1", { headers: { accept: "text/html" } })).text();
    expect(page).toContain(`DOI <a href="https://doi.org/${PREFIX}/relab.33.1">${PREFIX}/relab.33.1</a>`);
  });

  it("a second release updates the concept DOI to resolve to it and links the versions", { timeout: 90_000 }, async () => {
    const before = (await fakeLog()).length;
    expect((await requestRelease(admin, { version: "33.2", title: "DOI test release, second" })).status).toBe(202);
    await settledRelease("33.2", admin);
    const release = await doiSettled("33.2");
    expect(release).toMatchObject({ doi_status: "registered", doi: `${PREFIX}/relab.33.2`, concept_doi: CONCEPT });
    const record = (await dataCite(`${PREFIX}/relab.33.2`))!;
    expect(record.relatedIdentifiers).toEqual([
      { relatedIdentifier: CONCEPT, relatedIdentifierType: "DOI", relationType: "IsVersionOf" },
      { relatedIdentifier: `${PREFIX}/relab.33.1`, relatedIdentifierType: "DOI", relationType: "IsNewVersionOf" },
    ]);
    const concept = (await dataCite(CONCEPT))!;
    expect(concept.url).toBe("http://localhost/v1/releases/33.2");
    expect(concept.relatedIdentifiers.map((r: Attributes) => r.relatedIdentifier)).toEqual([
      `${PREFIX}/relab.33.1`,
      `${PREFIX}/relab.33.2`,
    ]);
    // The concept was updated in place (PUT), the version created (POST).
    const calls = (await fakeLog()).slice(before).map((call) => `${call.method} ${call.doi ?? call.path} ${call.status}`);
    expect(calls).toContain(`PUT ${CONCEPT} 200`);
    expect(calls).toContain("POST /dois 201");
    // The earlier version's record is unchanged: its IsNewVersionOf would have had to be added by hand.
    expect((await dataCite(`${PREFIX}/relab.33.1`))!.url).toBe("http://localhost/v1/releases/33.1");
  });

  it("DataCite down at publication holds nothing up: the release is published, its registration pending, retried", {
    timeout: 90_000,
  }, async () => {
    expect((await requestRelease(admin, { version: "33.3", title: "[datacite-down] while DataCite is down" })).status).toBe(202);
    const published = await settledRelease("33.3", admin);
    expect(published.status).toBe("published");
    const pending = await doiSettled("33.3", (r) => r.doi_error !== null);
    expect(pending).toMatchObject({ doi_status: "pending", doi: null });
    expect(pending.doi_error).toContain("DataCite answered 503");
    // Public readers see the release, not the error.
    const anonymous = (await (await readRelease("33.3")).json()) as ReleaseBody;
    expect(anonymous).toMatchObject({ status: "published", doi_status: "pending", doi_error: null });
    expect((await api("/v1/releases/33.3", { headers: { accept: "text/html" } })).status).toBe(200);
  });
});

describe("registration failures", () => {
  it("retries what may pass (down, slow, 5xx) until its attempts are spent, then fails; a superuser's retry registers it", {
    timeout: 60_000,
  }, async () => {
    await publishedRow("33.10", "[datacite-slow] slow");
    await publishedRow("33.11", "[datacite-500] broken");
    await publishedRow("33.12", "Down by its DOI");
    await setMode(`${PREFIX}/relab.33.12`, "down");
    const started = Date.now();
    expect(await attempt("33.10")).toEqual({ acked: true, retried: false });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await row("33.10")).toMatchObject({ doi_status: "pending", doi_attempts: 1, doi: null });
    expect((await row("33.10"))!.doi_error).toContain("timed out after 1000 ms");
    await attempt("33.11");
    expect(await row("33.11")).toMatchObject({ doi_status: "pending", doi_attempts: 1 });
    expect((await row("33.11"))!.doi_error).toContain("DataCite answered 500");

    for (let i = 1; i <= MAX_DOI_ATTEMPTS; i++) await attempt("33.12");
    const failed = await row("33.12");
    expect(failed).toMatchObject({ doi_status: "failed", doi_attempts: MAX_DOI_ATTEMPTS });
    expect(failed!.doi_error).toContain(`attempt ${MAX_DOI_ATTEMPTS} of ${MAX_DOI_ATTEMPTS}`);
    // Another attempt finds nothing to do.
    expect(await attempt("33.12")).toEqual({ acked: true, retried: false });
    expect((await row("33.12"))!.doi_attempts).toBe(MAX_DOI_ATTEMPTS);

    await setMode(`${PREFIX}/relab.33.12`, "ok");
    const retried = await api("/v1/admin/releases/33.12/doi", { method: "POST", headers: admin });
    expect(retried.status, await retried.clone().text()).toBe(202);
    expect(await retried.json()).toMatchObject({ version: "33.12", doi_status: "pending", doi_error: null });
    // The queue takes the retry from here.
    const registered = await doiSettled("33.12");
    expect(registered).toMatchObject({ doi_status: "registered", doi: `${PREFIX}/relab.33.12` });
    expect((await dataCite(`${PREFIX}/relab.33.12`))!.state).toBe("findable");
  });

  it("fails at once what retrying cannot mend: refused metadata, a taken DOI, refused credentials, no configuration", async () => {
    await publishedRow("33.20", "[datacite-refuse] refused");
    await attempt("33.20");
    expect(await row("33.20")).toMatchObject({ doi_status: "failed", doi_attempts: 1 });
    expect((await row("33.20"))!.doi_error).toContain("DataCite answered 422");

    // Someone else's record under the DOI this release would get.
    const taken = await fetch(`${FAKE_DATACITE.apiUrl}/dois`, {
      method: "POST",
      headers: {
        "content-type": "application/vnd.api+json",
        authorization: `Basic ${btoa(`${FAKE_DATACITE.repositoryId}:${FAKE_DATACITE.password}`)}`,
      },
      body: JSON.stringify({
        data: { type: "dois", attributes: { doi: `${PREFIX}/relab.33.21`, url: "https://elsewhere.example/thing" } },
      }),
    });
    expect(taken.status).toBe(201);
    // The fake holds documents to the JSON:API shape and the schema's controlled lists (what the service's pass).
    const malformed = await fetch(`${FAKE_DATACITE.apiUrl}/dois`, {
      method: "POST",
      headers: {
        "content-type": "application/vnd.api+json",
        authorization: `Basic ${btoa(`${FAKE_DATACITE.repositoryId}:${FAKE_DATACITE.password}`)}`,
      },
      body: JSON.stringify({
        data: {
          type: "dois",
          attributes: {
            doi: `${PREFIX}/malformed`,
            event: "publish",
            url: "https://x.example/",
            titels: [{ title: "typo" }],
            relatedIdentifiers: [{ relatedIdentifier: CONCEPT, relatedIdentifierType: "DOI", relationType: "IsSiblingOf" }],
          },
        },
      }),
    });
    expect(malformed.status).toBe(422);
    const sources = ((await malformed.json()) as { errors: { source: string }[] }).errors.map((e) => e.source);
    expect(sources).toEqual(
      expect.arrayContaining(["titels", "relatedIdentifiers/0", "titles", "creators", "publisher", "publicationYear", "types"]),
    );
    await publishedRow("33.21", "Taken");
    await attempt("33.21");
    expect(await row("33.21")).toMatchObject({ doi_status: "failed" });
    expect((await row("33.21"))!.doi_error).toContain(`The DOI ${PREFIX}/relab.33.21 is taken`);
    expect((await dataCite(`${PREFIX}/relab.33.21`)) ?? { url: "https://elsewhere.example/thing" }).toMatchObject({
      url: "https://elsewhere.example/thing",
    });

    await publishedRow("33.22", "Wrong password");
    await attempt("33.22", { DATACITE_PASSWORD: "not-the-password" });
    const refused = await row("33.22");
    expect(refused).toMatchObject({ doi_status: "failed" });
    expect(refused!.doi_error).toContain("DataCite answered 401");
    expect(refused!.doi_error).toContain("check DATACITE_REPOSITORY_ID, DATACITE_PASSWORD");
    expect(refused!.doi_error).not.toContain("not-the-password");

    await publishedRow("33.23", "No DataCite");
    await attempt("33.23", { DATACITE_PREFIX: "" });
    expect((await row("33.23"))!.doi_error).toContain("DataCite is not configured");
    // None of this ever turned a read into an error.
    for (const version of ["33.20", "33.21", "33.22", "33.23"]) expect((await readRelease(version)).status).toBe(200);
  });

  it("a superuser's retry is refused for anything but a failed (or stalled) registration", async () => {
    const retry = (version: string, headers = admin) => api(`/v1/admin/releases/${version}/doi`, { method: "POST", headers });
    await expectProblem(await retry("33.1"), 409, "DOI_REGISTERED");
    await publishedRow("33.30", "Pending");
    await expectProblem(await retry("33.30"), 409, "DOI_PENDING");
    // Pending without a live attempt and without change for two hours: its message was lost.
    await env.DB.prepare("UPDATE releases SET doi_updated_at = unixepoch() - 3 * 3600 WHERE version = '33.30'").run();
    expect((await retry("33.30")).status).toBe(202);
    await env.DB.prepare("UPDATE releases SET doi_status = 'disabled' WHERE version = '33.30'").run();
    await expectProblem(await retry("33.30"), 409, "DOI_DISABLED");
    await env.DB.prepare(
      "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES ('33.31', 'Building', 'CC-BY-4.0', 'building', 'http://localhost', 'b')",
    ).run();
    await expectProblem(await retry("33.31"), 409, "RELEASE_NOT_PUBLISHED");
    await expectProblem(await retry("33.99"), 404, "NOT_FOUND");
    const plain = await verifiedUser("plain");
    await expectProblem(await retry("33.20", bearer(plain.tokens.access_token)), 403, "SUPERUSER_REQUIRED");
    await expectProblem(await retry("33.20", {}), 401, "AUTHENTICATION_REQUIRED");
    // What the others saw cannot be retried; the refused one can, and says so to superusers only.
    expect((await (await readRelease("33.20")).json()) as ReleaseBody).toMatchObject({ doi_status: "failed", doi_error: null });
    expect(((await (await readRelease("33.20", admin)).json()) as ReleaseBody).doi_error).toContain("422");
  });
});
