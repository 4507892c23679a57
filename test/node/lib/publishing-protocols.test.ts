import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { negotiateRelease } from "../../../src/lib/negotiation.ts";
import {
  decodeResumptionToken,
  encodeResumptionToken,
  type ListPosition,
  oaiResponse,
  parseOaiRequest,
  parseOaiTime,
} from "../../../src/lib/oai-pmh.ts";
import { isValidOrcid, orcidCheckCharacter } from "../../../src/lib/orcid.ts";
import { element, xmlAttribute, xmlText } from "../../../src/lib/xml.ts";
import { readVariant } from "../../../src/services/caching/read-copies.ts";

describe("Accept negotiation (RFC 9110)", () => {
  it.each([
    [undefined, "application/json"],
    ["", "application/json"],
    ["*/*", "application/json"],
    ["application/*", "application/json"],
    ["text/*", "text/html"],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"],
    ["application/x-bibtex", "application/x-bibtex"],
    ["APPLICATION/X-BIBTEX", "application/x-bibtex"],
    ["application/x-bibtex;q=0.5, text/x-bibliography;q=0.9", "text/x-bibliography"],
    ["text/x-bibliography; style=apa; locale=en-US", "text/x-bibliography"],
    // The most specific range decides: text/html is refused although text/* is welcome.
    ["text/*, text/html;q=0", "text/x-bibliography"],
    ["*/*;q=0.1, application/ld+json", "application/ld+json"],
    ["application/vnd.citationstyles.csl+json, application/json;q=0.5", "application/vnd.citationstyles.csl+json"],
    // Equal qualities: the server's order.
    ["application/x-research-info-systems, application/vnd.datacite.datacite+json", "application/vnd.datacite.datacite+json"],
    // Malformed ranges are skipped; nothing usable left means anything.
    ["garbage, ;;;, text/", "application/json"],
    ["application/x-bibtex;q=2", "application/json"],
    ["image/png", null],
    ["application/json;q=0", null],
    ["image/png, */*;q=0", null],
  ])("%s -> %s", (accept, expected) => {
    expect(negotiateRelease(accept)).toBe(expected);
  });

  it("gives each representation its own part of a cache key, JSON none", () => {
    expect(readVariant(undefined)).toBe("");
    expect(readVariant("application/json")).toBe("");
    expect(readVariant("text/html,*/*;q=0.8")).toBe("html");
    expect(readVariant("application/x-bibtex")).toBe("bibtex");
    expect(readVariant("application/x-bibtex")).toBe("bibtex");
    expect(readVariant("image/png")).toBeNull();
    expect(readVariant(`${"x".repeat(2000)}, application/ld+json`)).toBe("jsonld");
  });
});

describe("ORCID iDs", () => {
  it("checks the ISO 7064 11-2 check character", () => {
    // ORCID's own examples.
    expect(orcidCheckCharacter("000000021825009")).toBe("7");
    expect(isValidOrcid("0000-0002-1825-0097")).toBe(true);
    expect(isValidOrcid("0000-0001-5109-3700")).toBe(true);
    expect(isValidOrcid("0000-0002-1694-233X")).toBe(true);
    for (const bad of [
      "0000-0002-1825-0098",
      "0000-0002-1694-2330",
      "0000000218250097",
      "0000-0002-1825-009",
      "0000-0002-1825-0097 ",
      "https://orcid.org/0000-0002-1825-0097",
      "0000-0002-1694-233x",
    ]) {
      expect(isValidOrcid(bad), bad).toBe(false);
    }
  });
});

describe("XML", () => {
  it("escapes text and attributes and drops what XML 1.0 cannot hold", () => {
    expect(xmlText("a < b & c > d")).toBe("a &lt; b &amp; c &gt; d");
    expect(xmlAttribute('say "hi"\n<&>')).toBe("say &quot;hi&quot;&#10;&lt;&amp;&gt;");
    expect(xmlText("nul\u0000 bell\u0007 ok\ttab \uFFFE lone\uD800 pair🙂")).toBe("nul bell ok\ttab  lone pair🙂");
    const doc = element("a", { x: '"</a>' }, xmlText("]]></a><b>"));
    expect(XMLValidator.validate(doc)).toBe(true);
    expect(new XMLParser({ ignoreAttributes: false }).parse(doc)).toEqual({ a: { "#text": "]]></a><b>", "@_x": '"</a>' } });
  });
});

describe("OAI-PMH requests", () => {
  const errorsOf = (pairs: [string, string][]) => {
    const parsed = parseOaiRequest(pairs);
    return parsed.ok ? [] : parsed.errors.map((e) => e.code);
  };

  it("names every error condition of the arguments", () => {
    expect(errorsOf([])).toEqual(["badVerb"]);
    expect(errorsOf([["verb", "Dance"]])).toEqual(["badVerb"]);
    expect(
      errorsOf([
        ["verb", "Identify"],
        ["verb", "Identify"],
      ]),
    ).toEqual(["badVerb"]);
    expect(
      errorsOf([
        ["verb", "Identify"],
        ["metadataPrefix", "oai_dc"],
      ]),
    ).toEqual(["badArgument"]);
    expect(errorsOf([["verb", "ListRecords"]])).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "GetRecord"],
        ["identifier", "x"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["metadataPrefix", "oai_dc"],
        ["metadataPrefix", "oai_dc"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["metadataPrefix", "oai_dc"],
        ["from", "2026-13-01"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["metadataPrefix", "oai_dc"],
        ["until", "2026-02-30"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["metadataPrefix", "oai_dc"],
        ["from", "2026-01-01"],
        ["until", "2026-01-02T00:00:00Z"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["metadataPrefix", "oai_dc"],
        ["from", "2026-02-01"],
        ["until", "2026-01-01"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["resumptionToken", "x"],
        ["metadataPrefix", "oai_dc"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "GetRecord"],
        ["resumptionToken", "x"],
      ]),
    ).toEqual(["badArgument"]);
    expect(
      errorsOf([
        ["verb", "ListRecords"],
        ["metadataPrefix", "oai_dc"],
        ["from", "2026-01-01"],
        ["until", "2026-01-01"],
      ]),
    ).toEqual([]);
    expect(parseOaiTime("2026-05-01T12:00:00Z")).toEqual({ seconds: Date.UTC(2026, 4, 1, 12) / 1000, day: false });
    expect(parseOaiTime("2026-05-01T24:00:00Z")).toBeNull();
    expect(parseOaiTime("2026-05-01T12:00:00+01:00")).toBeNull();
  });

  it("carries a list's position in a token that expires after its time", () => {
    const position: ListPosition = {
      metadataPrefix: "oai_dc",
      from: 100,
      until: null,
      after: { seconds: 1_700_000_000, version: "1.0" },
      cursor: 100,
      completeListSize: 250,
      expiresAt: 2_000,
    };
    const token = encodeResumptionToken(position);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeResumptionToken(token, 1_999)).toEqual(position);
    expect(decodeResumptionToken(token, 2_000)).toMatchObject({ code: "badResumptionToken" });
    for (const bad of ["", "!!!", "bm90IGpzb24", encodeResumptionToken(position).slice(0, -4)]) {
      expect(decodeResumptionToken(bad, 0)).toMatchObject({ code: "badResumptionToken" });
    }
  });

  it("writes a response with the root, responseDate and request first, and no echo of a bad request", () => {
    const document = oaiResponse({
      responseDate: 0,
      baseUrl: "https://api.example.org/v1/oai",
      echo: null,
      answer: { errors: [{ code: "badVerb", message: "The verb argument is missing." }] },
    });
    expect(document.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"')).toBe(true);
    expect(document).toContain(
      '<responseDate>1970-01-01T00:00:00Z</responseDate><request>https://api.example.org/v1/oai</request><error code="badVerb">',
    );
    expect(XMLValidator.validate(document)).toBe(true);
  });
});
