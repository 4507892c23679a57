import { createRoute, z } from "@hono/zod-openapi";
import { PageQuerySchema, pagedSchema } from "../../lib/pagination";
import { problemResponses } from "../../lib/problem";
import { authenticateCarried } from "../../middleware/authenticate";
import { cachedRead } from "../../middleware/read-copies";
import {
  CslJsonSchema,
  DataCiteJsonSchema,
  ReleaseSchema,
  ReleaseSummarySchema,
  ReleaseVersionParamsSchema,
  SchemaOrgDatasetSchema,
} from "./releases.schemas";

const VISIBILITY =
  "Public. Releases still building or failed exist only for superusers with TOTP (404 `NOT_FOUND` to anyone else). A published release " +
  "never changes: no route writes to it (405).";

export const listReleases = createRoute({
  method: "get",
  path: "/releases",
  operationId: "listReleases",
  tags: ["Releases"],
  summary: "List dataset releases",
  description: `Dataset releases, newest first (by when they were requested), without their file lists. ${VISIBILITY}`,
  middleware: [authenticateCarried] as const,
  request: { query: z.strictObject(PageQuerySchema.shape) },
  responses: {
    200: {
      description: "A page of releases.",
      content: { "application/json": { schema: pagedSchema(ReleaseSummarySchema, "ReleasePage") } },
    },
    ...problemResponses(422, 503),
  },
});

const NEGOTIATION =
  "Content negotiation, as DOI resolvers do it (`Vary: Accept`; quality values honoured, ties going to the order here): " +
  "`application/json` (the default, also for `*/*` and no `Accept`), `text/html` (the landing page: citation, licence, counts, " +
  "files with size, SHA-256 and link, how to load them, other versions, schema.org JSON-LD inside; self-contained, strict CSP), " +
  "`application/ld+json` (schema.org `Dataset`), `application/vnd.datacite.datacite+json` (DataCite Metadata Schema 4), " +
  "`application/vnd.citationstyles.csl+json` (CSL-JSON), `application/x-bibtex`, `application/x-research-info-systems` (RIS) and " +
  "`text/x-bibliography` (a formatted reference; a `style` parameter is accepted and ignored: one style). An `Accept` that allows none " +
  "of them: 406 `NOT_ACCEPTABLE`, listing them. Each representation is cached apart (one is never served for another).";

/** The representations of a release (decisions.md, "Publishing releases"). */
const releaseContent = {
  "application/json": { schema: ReleaseSchema },
  "text/html": { schema: z.string().openapi({ description: "The landing page." }) },
  "application/ld+json": { schema: SchemaOrgDatasetSchema },
  "application/vnd.datacite.datacite+json": { schema: DataCiteJsonSchema },
  "application/vnd.citationstyles.csl+json": { schema: CslJsonSchema },
  "application/x-bibtex": { schema: z.string().openapi({ description: "A BibTeX `@misc` entry." }) },
  "application/x-research-info-systems": { schema: z.string().openapi({ description: "A RIS record (`TY  - DATA`)." }) },
  "text/x-bibliography": { schema: z.string().openapi({ description: "A formatted reference (APA style)." }) },
};

export const getLatestRelease = createRoute({
  method: "get",
  path: "/releases/latest",
  operationId: "getLatestRelease",
  tags: ["Releases"],
  summary: "Read the latest published release",
  description: `The newest published release (the first of the public list), with its files. None published yet: 404 \`NOT_FOUND\`. ${NEGOTIATION}`,
  middleware: [cachedRead("release")] as const,
  responses: {
    200: { description: "The latest release, in the representation asked for.", content: releaseContent },
    ...problemResponses(404, 406, 503),
  },
});

export const getRelease = createRoute({
  method: "get",
  path: "/releases/{version}",
  operationId: "getRelease",
  tags: ["Releases"],
  summary: "Read a release",
  description:
    "A release: its metadata, its DOI and the state of its registration, the counts of its snapshot, the build's progress " +
    `(\`records_written\`, while building) and every file with its size, SHA-256, media type and URL. ${VISIBILITY} ${NEGOTIATION} ` +
    "The representations other than JSON exist once the snapshot is taken.",
  middleware: [cachedRead("release")] as const,
  request: { params: ReleaseVersionParamsSchema },
  responses: {
    200: { description: "The release, in the representation asked for.", content: releaseContent },
    ...problemResponses(404, 406, 503),
  },
});

// Each file is served with its own media type (as the release lists it): tables as CSV and
// Parquet, datapackage.json, README.md, SHA256SUMS, and the images in their formats.
const fileContent = (range: boolean) => {
  const bytes = z.string().openapi({ format: "binary" });
  const text = z.string();
  return {
    "text/csv": { schema: text },
    "application/vnd.apache.parquet": { schema: bytes },
    // A range of datapackage.json is a piece of JSON text, not a document.
    "application/json": {
      schema: range ? text : z.object({}).passthrough().openapi({ description: "datapackage.json: a Frictionless Data Package." }),
    },
    "text/markdown": { schema: text },
    "text/plain": { schema: text },
    "application/yaml": { schema: text },
    "image/*": { schema: bytes },
  };
};

export const getReleaseFile = createRoute({
  method: "get",
  // `{path}` may hold slashes (`reference/units.csv`, `images/<sha256>.jpg`): the router's
  // pattern says so, and the OpenAPI document shows it as `{path}` (src/lib/openapi.ts).
  path: "/releases/{version}/files/{path{.+}}",
  operationId: "getReleaseFile",
  tags: ["Releases"],
  summary: "Download a file of a release",
  description:
    "The bytes of a file of a published release, as listed in the release (or in its images table for `images/...`). `ETag` is the " +
    "quoted SHA-256 of the file and `Cache-Control: public, max-age=31536000, immutable`: the bytes never change. `Accept-Ranges: bytes`: " +
    "one range per request (`bytes=a-b`, `bytes=a-`, `bytes=-n`) answers 206 with `Content-Range`, a range starting past the end 416; " +
    "pandas, Polars, DuckDB and hyparquet read Parquet this way without downloading it whole. `If-None-Match` with the ETag: 304. " +
    "A superuser reading a release that is not published gets `Cache-Control: no-store`. Anything unknown: 404.",
  middleware: [authenticateCarried] as const,
  request: {
    params: z.object({
      version: ReleaseVersionParamsSchema.shape.version,
      path: z.string().openapi({
        param: { name: "path", in: "path" },
        description: "The file's path in the release; may contain `/`.",
        example: "reference/units.csv",
      }),
    }),
  },
  responses: {
    200: { description: "The file.", content: fileContent(false) },
    206: { description: "The requested range.", content: fileContent(true) },
    304: { description: "Unchanged since the `If-None-Match` ETag (it never changes)." },
    ...problemResponses(404, 416, 503),
  },
});
