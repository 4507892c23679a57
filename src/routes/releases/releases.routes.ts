import { createRoute, z } from "@hono/zod-openapi";
import { PageQuerySchema, pagedSchema } from "../../lib/pagination";
import { problemResponses } from "../../lib/problem";
import { authenticateCarried } from "../../middleware/authenticate";
import { ReleaseSchema, ReleaseSummarySchema, ReleaseVersionParamsSchema } from "./releases.schemas";

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

export const getLatestRelease = createRoute({
  method: "get",
  path: "/releases/latest",
  operationId: "getLatestRelease",
  tags: ["Releases"],
  summary: "Read the latest published release",
  description: "The newest published release (the first of the public list), with its files. None published yet: 404 `NOT_FOUND`.",
  responses: {
    200: { description: "The latest release.", content: { "application/json": { schema: ReleaseSchema } } },
    ...problemResponses(404),
  },
});

export const getRelease = createRoute({
  method: "get",
  path: "/releases/{version}",
  operationId: "getRelease",
  tags: ["Releases"],
  summary: "Read a release",
  description:
    "A release: its metadata, the counts of its snapshot, the build's progress (`records_written`, while building) and every file " +
    `with its size, SHA-256, media type and URL. ${VISIBILITY}`,
  middleware: [authenticateCarried] as const,
  request: { params: ReleaseVersionParamsSchema },
  responses: {
    200: { description: "The release.", content: { "application/json": { schema: ReleaseSchema } } },
    ...problemResponses(404, 503),
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
