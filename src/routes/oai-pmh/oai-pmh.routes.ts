import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";

const ABOUT =
  "OAI-PMH 2.0 over the published dataset releases, for repository harvesters: `Identify`, `ListMetadataFormats`, `ListSets`, " +
  "`ListIdentifiers`, `ListRecords`, `GetRecord`. Item identifiers `oai:<host>:release/<version>`; datestamps the publication time " +
  "(granularity seconds, UTC; `from`/`until` as a day or a second); formats `oai_dc` (every release) and `oai_datacite` (releases " +
  "with a registered DOI); no sets (`noSetHierarchy`); lists of 100 with resumption tokens valid for 24 hours. Releases are never " +
  "deleted (`deletedRecord` `no`). Every answer is a 200 `text/xml` document; the protocol's errors (`badVerb`, `badArgument`, " +
  "`badResumptionToken`, `cannotDisseminateFormat`, `idDoesNotExist`, `noRecordsMatch`, `noSetHierarchy`) are inside it.";

// Documentation only (any value passes here): the handler reads the arguments as sent, and a
// repeated or malformed one is an error the protocol names, inside a 200.
const argument = (description: string) => z.unknown().optional().openapi({ type: "string", description });

const OaiQuerySchema = z.object({
  verb: argument("The request's verb."),
  identifier: argument("An item identifier (`GetRecord`, `ListMetadataFormats`)."),
  metadataPrefix: argument("`oai_dc` or `oai_datacite`."),
  from: argument("Lower bound of the datestamps: `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ssZ`."),
  until: argument("Upper bound, in the same granularity as `from`."),
  set: argument("Not supported: `noSetHierarchy`."),
  resumptionToken: argument("Continues a list; exclusive."),
});

const xml = { "text/xml": { schema: z.string().openapi({ description: "An OAI-PMH response document." }) } };

export const oaiGet = createRoute({
  method: "get",
  path: "/oai",
  operationId: "oaiPmh",
  tags: ["Releases"],
  summary: "Harvest releases (OAI-PMH)",
  description: ABOUT,
  request: { query: OaiQuerySchema },
  responses: { 200: { description: "The OAI-PMH response.", content: xml }, ...problemResponses(503) },
});

export const oaiPost = createRoute({
  method: "post",
  path: "/oai",
  operationId: "oaiPmhPost",
  tags: ["Releases"],
  summary: "Harvest releases (OAI-PMH, POST)",
  description: `The same as GET, with the arguments as an \`application/x-www-form-urlencoded\` body. ${ABOUT}`,
  request: {
    body: {
      required: true,
      content: {
        // A plain JSON Schema, not zod: the router then validates nothing and the body is read as sent.
        "application/x-www-form-urlencoded": {
          schema: {
            type: "object",
            properties: Object.fromEntries(Object.keys(OaiQuerySchema.shape).map((name) => [name, { type: "string" }])),
          },
        },
      },
    },
  },
  responses: { 200: { description: "The OAI-PMH response.", content: xml }, ...problemResponses(413, 415, 503) },
});
