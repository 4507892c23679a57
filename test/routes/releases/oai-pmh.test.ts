import { env } from "cloudflare:workers";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { api, roundTrips } from "../../support/http";

// OAI-PMH 2.0 at /v1/oai (decisions.md, "Publishing releases"), checked against the structure
// the specification requires: the root element in the OAI-PMH namespace, `responseDate`, the
// `request` echo (with attributes only for a well-formed request), the verb's element or the
// errors, in that order; each verb's elements in their order; every error code. Releases are
// made as rows (a published release's row is all OAI-PMH reads): 105 of them, so lists page.

const NS = "http://www.openarchives.org/OAI/2.0/";
const BASE = "http://localhost/v1/oai";
const T0 = Date.UTC(2026, 0, 10, 8, 0, 0) / 1000;
const COUNT = 105;

// preserveOrder keeps the document's element order, which the specification fixes.
const ordered = new XMLParser({ ignoreAttributes: false, preserveOrder: true, parseTagValue: false, trimValues: false });
const plain = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  isArray: (name) => ["record", "header", "error", "metadataFormat", "dc:identifier", "dc:format"].includes(name),
});

type Node = Record<string, unknown> & { ":@"?: Record<string, string> };
const nameOf = (node: Node) => Object.keys(node).find((key) => key !== ":@")!;
const childrenOf = (node: Node) => node[nameOf(node)] as Node[];

interface Answer {
  xml: string;
  root: Node;
  /** Names of the root's children, in order. */
  order: string[];
  request: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: the parsed document is checked member by member
  doc: Record<string, any>;
  errors: string[];
}

async function oai(query: string, init: RequestInit = {}): Promise<Answer> {
  const response = await api(`/v1/oai${query}`, init);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/xml; charset=utf-8");
  expect(roundTrips(response)).toBeLessThanOrEqual(1);
  const xml = await response.text();
  expect(XMLValidator.validate(xml)).toBe(true);
  const [declaration, root] = ordered.parse(xml) as Node[];
  expect(nameOf(declaration!)).toBe("?xml");
  expect(nameOf(root!)).toBe("OAI-PMH");
  expect(root![":@"]!["@_xmlns"]).toBe(NS);
  expect(root![":@"]!["@_xsi:schemaLocation"]).toBe(`${NS} http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd`);
  const children = childrenOf(root!).filter((child) => nameOf(child) !== "#text");
  const order = children.map(nameOf);
  expect(order.slice(0, 2)).toEqual(["responseDate", "request"]);
  const responseDate = (childrenOf(children[0]!)[0] as { "#text": string })["#text"];
  expect(responseDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  expect(Math.abs(Date.parse(responseDate) - Date.now())).toBeLessThan(60_000);
  expect((childrenOf(children[1]!)[0] as { "#text": string })["#text"]).toBe(BASE);
  const request = Object.fromEntries(Object.entries(children[1]![":@"] ?? {}).map(([key, value]) => [key.slice(2), value]));
  const doc = plain.parse(xml)["OAI-PMH"];
  const errors = ((doc.error ?? []) as { "@_code": string }[]).map((error) => error["@_code"]);
  if (errors.length > 0) expect(order.slice(2).every((name) => name === "error")).toBe(true);
  else expect(order).toHaveLength(3);
  return { xml, root: root!, order, request, doc, errors };
}

beforeAll(async () => {
  // Published releases one hour apart, every third with a registered DOI; one building (never listed).
  const statements = Array.from({ length: COUNT }, (_, i) =>
    env.DB.prepare(
      `INSERT INTO releases (version, title, description, licence, status, base_url, build_id, snapshot_at, published_at, records, base_products,
         images, record_materials, created_at, doi, concept_doi, doi_status, subjects)
       VALUES (?, ?, ?, 'CC-BY-4.0', 'published', 'http://localhost', 'b', ?, ?, 3, 1, 0, 2, ?, ?, ?, ?, '["Kettle"]')`,
    ).bind(
      `9.${i}`,
      i === 0 ? 'First <release> & "co"' : `Release ${i}`,
      i === 0 ? "Holds ]]> and <tags>." : null,
      T0 + i * 3600 - 60,
      T0 + i * 3600,
      T0 + i * 3600 - 60,
      i % 3 === 0 ? `10.80001/relab.9.${i}` : null,
      i % 3 === 0 ? "10.80001/relab.all" : null,
      i % 3 === 0 ? "registered" : "disabled",
    ),
  );
  statements.push(
    env.DB.prepare(
      "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES ('9.999', 'Building', 'CC-BY-4.0', 'building', 'http://localhost', 'x')",
    ),
  );
  await env.DB.batch(statements);
});

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

describe("OAI-PMH", () => {
  it("Identify: the repository, its earliest datestamp, granularity and deleted-record policy, in order", async () => {
    const answer = await oai("?verb=Identify");
    expect(answer.request).toEqual({ verb: "Identify" });
    const identify = childrenOf(answer.root).find((child) => nameOf(child) === "Identify")!;
    const names = childrenOf(identify).map(nameOf);
    expect(names).toEqual([
      "repositoryName",
      "baseURL",
      "protocolVersion",
      "adminEmail",
      "earliestDatestamp",
      "deletedRecord",
      "granularity",
    ]);
    expect(answer.doc.Identify).toMatchObject({
      baseURL: BASE,
      protocolVersion: "2.0",
      adminEmail: "noreply@relab.localhost",
      earliestDatestamp: iso(T0),
      deletedRecord: "no",
      granularity: "YYYY-MM-DDThh:mm:ssZ",
    });
    // POST with a form: the same answer.
    const posted = await oai("", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "verb=Identify",
    });
    expect(posted.doc.Identify).toEqual(answer.doc.Identify);
  });

  it("ListMetadataFormats: both formats, or those an item has (oai_datacite needs a DOI)", async () => {
    const all = await oai("?verb=ListMetadataFormats");
    expect(all.doc.ListMetadataFormats.metadataFormat.map((f: { metadataPrefix: string }) => f.metadataPrefix)).toEqual([
      "oai_dc",
      "oai_datacite",
    ]);
    const withDoi = await oai("?verb=ListMetadataFormats&identifier=oai:localhost:release/9.0");
    expect(withDoi.doc.ListMetadataFormats.metadataFormat).toHaveLength(2);
    const withoutDoi = await oai("?verb=ListMetadataFormats&identifier=oai:localhost:release/9.1");
    expect(withoutDoi.doc.ListMetadataFormats.metadataFormat).toEqual([
      {
        metadataPrefix: "oai_dc",
        schema: "http://www.openarchives.org/OAI/2.0/oai_dc.xsd",
        metadataNamespace: "http://www.openarchives.org/OAI/2.0/oai_dc/",
      },
    ]);
    const unknown = await oai("?verb=ListMetadataFormats&identifier=oai:localhost:release/9.999");
    expect(unknown.errors).toEqual(["idDoesNotExist"]);
    expect(unknown.request).toEqual({ verb: "ListMetadataFormats", identifier: "oai:localhost:release/9.999" });
  });

  it("ListIdentifiers pages by 100 with a resumption token, then an empty one; ListRecords the same with metadata", async () => {
    const firstPage = await oai("?verb=ListIdentifiers&metadataPrefix=oai_dc");
    const headers = firstPage.doc.ListIdentifiers.header as { identifier: string; datestamp: string }[];
    expect(headers).toHaveLength(100);
    expect(headers[0]).toEqual({ identifier: "oai:localhost:release/9.0", datestamp: iso(T0) });
    const token = firstPage.doc.ListIdentifiers.resumptionToken;
    expect(token["@_completeListSize"]).toBe(String(COUNT));
    expect(token["@_cursor"]).toBe("0");
    expect(Date.parse(token["@_expirationDate"]) - Date.now()).toBeGreaterThan(23 * 3600_000);
    // The token element comes last.
    const list = childrenOf(firstPage.root).find((child) => nameOf(child) === "ListIdentifiers")!;
    expect(childrenOf(list).map(nameOf).at(-1)).toBe("resumptionToken");

    const secondPage = await oai(`?verb=ListIdentifiers&resumptionToken=${encodeURIComponent(token["#text"])}`);
    expect(secondPage.request).toEqual({ verb: "ListIdentifiers", resumptionToken: token["#text"] });
    const rest = secondPage.doc.ListIdentifiers.header as { identifier: string }[];
    expect(rest.map((h) => h.identifier)).toEqual(Array.from({ length: 5 }, (_, i) => `oai:localhost:release/9.${100 + i}`));
    expect(secondPage.doc.ListIdentifiers.resumptionToken).toEqual({ "@_completeListSize": String(COUNT), "@_cursor": "100" });

    const records = await oai("?verb=ListRecords&metadataPrefix=oai_dc&until=2026-01-10");
    const items = records.doc.ListRecords.record as { header: { identifier: string }[]; metadata: Answer["doc"] }[];
    // Until a day: its end. Releases at 08:00 ... 23:00 of 10 January.
    expect(items).toHaveLength(16);
    expect(records.doc.ListRecords.resumptionToken).toBeUndefined();
    const dc = items[0]!.metadata["oai_dc:dc"];
    expect(dc["@_xmlns:oai_dc"]).toBe("http://www.openarchives.org/OAI/2.0/oai_dc/");
    expect(dc["@_xmlns:dc"]).toBe("http://purl.org/dc/elements/1.1/");
    expect(dc["dc:title"]).toBe('First <release> & "co"');
    expect(dc["dc:description"]).toContain("Holds ]]> and <tags>.");
    expect(dc["dc:identifier"]).toEqual(["https://doi.org/10.80001/relab.9.0", "http://localhost/v1/releases/9.0"]);
    expect(dc["dc:type"]).toBe("Dataset");
    expect(dc["dc:subject"]).toBe("Kettle");
  });

  it("selects by from and until at either granularity, and oai_datacite only releases with a DOI", async () => {
    const window = await oai(`?verb=ListIdentifiers&metadataPrefix=oai_dc&from=${iso(T0 + 3600)}&until=${iso(T0 + 3 * 3600)}`);
    expect((window.doc.ListIdentifiers.header as { identifier: string }[]).map((h) => h.identifier)).toEqual([
      "oai:localhost:release/9.1",
      "oai:localhost:release/9.2",
      "oai:localhost:release/9.3",
    ]);
    const datacite = await oai("?verb=ListRecords&metadataPrefix=oai_datacite&from=2026-01-10&until=2026-01-10");
    const items = datacite.doc.ListRecords.record as { header: { identifier: string }[]; metadata: Answer["doc"] }[];
    expect(items.map((r) => r.header[0]!.identifier)).toEqual([0, 3, 6, 9, 12, 15].map((i) => `oai:localhost:release/9.${i}`));
    const wrapper = items[0]!.metadata.oai_datacite;
    expect(wrapper["@_xmlns"]).toBe("http://schema.datacite.org/oai/oai-1.1/");
    expect(wrapper.schemaVersion).toBe("4");
    const resource = wrapper.payload.resource;
    expect(resource["@_xmlns"]).toBe("http://datacite.org/schema/kernel-4");
    expect(resource.identifier).toEqual({ "#text": "10.80001/RELAB.9.0", "@_identifierType": "DOI" });
    expect(resource.resourceType).toEqual({ "#text": "Dataset release", "@_resourceTypeGeneral": "Dataset" });
    expect(resource.titles.title).toBe('First <release> & "co"');
  });

  it("GetRecord: an item in a format, or idDoesNotExist / cannotDisseminateFormat, echoing the request", async () => {
    const record = await oai("?verb=GetRecord&identifier=oai:localhost:release/9.4&metadataPrefix=oai_dc");
    expect(record.request).toEqual({ verb: "GetRecord", identifier: "oai:localhost:release/9.4", metadataPrefix: "oai_dc" });
    expect(record.doc.GetRecord.record[0].header[0]).toEqual({ identifier: "oai:localhost:release/9.4", datestamp: iso(T0 + 4 * 3600) });
    const cases: [string, string][] = [
      ["?verb=GetRecord&identifier=oai:localhost:release/9.4&metadataPrefix=oai_datacite", "cannotDisseminateFormat"],
      ["?verb=GetRecord&identifier=oai:localhost:release/9.0&metadataPrefix=marc21", "cannotDisseminateFormat"],
      ["?verb=GetRecord&identifier=oai:localhost:release/9.999&metadataPrefix=oai_dc", "idDoesNotExist"],
      ["?verb=GetRecord&identifier=oai:elsewhere.org:release/9.0&metadataPrefix=oai_dc", "idDoesNotExist"],
      ["?verb=GetRecord&identifier=oai:localhost:release/../x&metadataPrefix=oai_dc", "idDoesNotExist"],
    ];
    for (const [query, code] of cases) {
      const answer = await oai(query);
      expect(answer.errors, query).toEqual([code]);
      expect(answer.request.verb).toBe("GetRecord");
    }
  });

  it("names every error condition, without echoing the arguments of a bad verb or bad arguments", async () => {
    const cases: [string, string[], boolean][] = [
      ["", ["badVerb"], false],
      ["?verb=Explode", ["badVerb"], false],
      ["?verb=Identify&verb=Identify", ["badVerb"], false],
      ["?verb=Identify&extra=1", ["badArgument"], false],
      ["?verb=ListRecords", ["badArgument"], false],
      ["?verb=ListRecords&metadataPrefix=oai_dc&from=yesterday", ["badArgument"], false],
      ["?verb=ListRecords&metadataPrefix=oai_dc&from=2026-01-01&until=2026-01-02T00:00:00Z", ["badArgument"], false],
      ["?verb=ListRecords&metadataPrefix=oai_dc&resumptionToken=abc", ["badArgument"], false],
      ["?verb=ListRecords&resumptionToken=not-a-token", ["badResumptionToken"], true],
      ["?verb=ListRecords&metadataPrefix=marc21", ["cannotDisseminateFormat"], true],
      ["?verb=ListRecords&metadataPrefix=oai_dc&from=2030-01-01", ["noRecordsMatch"], true],
      ["?verb=ListRecords&metadataPrefix=oai_dc&set=kettles", ["noSetHierarchy"], true],
      ["?verb=ListSets", ["noSetHierarchy"], true],
    ];
    for (const [query, codes, echoed] of cases) {
      const answer = await oai(query);
      expect(answer.errors, query).toEqual(codes);
      if (echoed) expect(Object.keys(answer.request).length, query).toBeGreaterThan(0);
      else expect(answer.request, query).toEqual({});
    }
    // An expired token (one a day and a second old, made as the repository makes them).
    const stale = btoa(JSON.stringify([1, "oai_dc", null, null, T0, "9.0", 100, COUNT, Math.floor(Date.now() / 1000) - 1]))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect((await oai(`?verb=ListIdentifiers&resumptionToken=${stale}`)).errors).toEqual(["badResumptionToken"]);
  });
});
