import { z } from "@hono/zod-openapi";
import { DOI_STATUSES, RELEASE_STATUSES } from "../../db/schema";
import { LICENCE_IDS } from "../../lib/release/licences";
import { multilineText, singleLineText } from "../../lib/text";

/** A release's version: 1 to 32 characters of `[0-9A-Za-z.-]`, starting with a digit. */
export const RELEASE_VERSION = /^[0-9][0-9A-Za-z.-]{0,31}$/;

export const ReleaseVersionParamsSchema = z.object({
  version: z.string().openapi({ param: { name: "version", in: "path" }, description: "The release's version.", example: "2026.1" }),
});

export const ReleaseFileSchema = z
  .object({
    path: z.string().openapi({ description: "Relative to the release; the file's URL ends with it.", example: "records.parquet" }),
    bytes: z.number().int(),
    sha256: z.string().openapi({ description: "Lower-case hex SHA-256 of the file (also its `ETag`).", example: "9f2c…" }),
    media_type: z.string().openapi({ example: "application/vnd.apache.parquet" }),
    url: z.string().openapi({ example: "https://api.relab.example/v1/releases/2026.1/files/records.parquet" }),
  })
  .openapi("ReleaseFile");

const count = (description: string) =>
  z
    .number()
    .int()
    .nullable()
    .openapi({ description: `${description} Null until the snapshot is taken.` });

const releaseFields = {
  version: z.string().openapi({ example: "2026.1" }),
  title: z.string().openapi({ example: "relab dataset, first release" }),
  description: z.string().nullable(),
  licence: z.string().openapi({ description: "SPDX id of the licence.", example: "CC-BY-4.0" }),
  status: z.enum(RELEASE_STATUSES).openapi({
    description:
      "`building` until its files are written, then `published` (for good) or `failed`. Only superusers see releases that are not published.",
  }),
  url: z
    .string()
    .openapi({ description: "This release's address, which its citation names.", example: "https://api.relab.example/v1/releases/2026.1" }),
  citation: z
    .string()
    .nullable()
    .openapi({
      description:
        "A suggested citation (README.md gives it too, with BibTeX; other formats by content negotiation on the release's URL), " +
        "naming the DOI once registered, the release's URL before; null until the snapshot is taken.",
      example: "relab (2026). relab dataset, first release (Version 2026.1) [Data set]. https://doi.org/10.1234/relab.2026.1",
    }),
  doi: z.string().nullable().openapi({
    description: "The version's DOI (`<prefix>/relab.<version>`, in lower case), once DataCite has registered it; null until then.",
    example: "10.1234/relab.2026.1",
  }),
  concept_doi: z.string().nullable().openapi({
    description: "The DOI of all versions (`<prefix>/relab.all`), which resolves to the newest release; null until registered.",
    example: "10.1234/relab.all",
  }),
  doi_status: z.enum(DOI_STATUSES).openapi({
    description:
      "`disabled`: DataCite was not configured when the release was published (no DOI); `pending`: published, registration under way " +
      "(retried by the queue when DataCite is down, slow or failing); `registered`: both DOIs findable; `failed`: given up " +
      "(`POST /v1/admin/releases/{version}/doi` retries it). A building or failed release is `disabled` until it is published.",
  }),
  doi_error: z.string().nullable().openapi({
    description: "Why the last registration attempt failed (superusers with TOTP only; null for everyone else).",
  }),
  snapshot_at: z
    .string()
    .nullable()
    .openapi({ description: "The instant the data was taken; null while the build has not reached it.", example: "2026-05-01T12:00:00Z" }),
  created_at: z.string().openapi({ example: "2026-05-01T11:59:58Z" }),
  published_at: z.string().nullable().openapi({ example: "2026-05-01T12:00:31Z" }),
  counts: z.object({
    records: count("Base products and components."),
    base_products: count("Base products."),
    images: count("Rows of the images table (an image of a record)."),
    record_materials: count("Bill-of-materials rows."),
  }),
  progress: z.object({
    records_written: z
      .number()
      .int()
      .openapi({ description: "Rows of the records table written so far (while building; all of them once published)." }),
  }),
  failure_reason: z
    .string()
    .nullable()
    .openapi({ description: "Why the build failed (superusers see failed releases only); null otherwise." }),
};

export const ReleaseSummarySchema = z.object(releaseFields).openapi("ReleaseSummary");

export const ReleaseSchema = z
  .object({
    ...releaseFields,
    files: z.array(ReleaseFileSchema).openapi({
      description:
        "Every file of the release except the image files under `images/`, which the images table lists (with their SHA-256 and size) " +
        "and SHA256SUMS covers. Empty until files are written.",
    }),
  })
  .openapi("Release");

export const NewReleaseSchema = z
  .strictObject({
    version: z.string().regex(RELEASE_VERSION).openapi({
      description: "1 to 32 characters of `0-9`, `A-Z`, `a-z`, `.` and `-`, starting with a digit; never reused.",
      example: "2026.1",
    }),
    title: singleLineText().min(1).max(200).openapi({ example: "relab dataset, first release" }),
    description: multilineText().max(5000).nullable().optional(),
    licence: z.enum(LICENCE_IDS).default("CC-BY-4.0").openapi({ description: "SPDX id; default `CC-BY-4.0`.", example: "CC-BY-4.0" }),
  })
  .openapi("NewRelease", { example: { version: "2026.1", title: "relab dataset, first release", licence: "CC-BY-4.0" } });

const looseObject = <T extends z.ZodRawShape>(shape: T) => z.object(shape).catchall(z.unknown());

export const SchemaOrgDatasetSchema = looseObject({
  "@context": z.literal("https://schema.org"),
  "@type": z.literal("Dataset"),
  "@id": z.string(),
  name: z.string(),
  description: z.string(),
  url: z.string(),
  identifier: z.array(z.string()).openapi({ description: "The DOI as a URL (once registered), then the release's URL." }),
  version: z.string(),
  license: z.string(),
  isAccessibleForFree: z.boolean(),
  creator: looseObject({ "@type": z.literal("Organization"), name: z.string() }),
  publisher: looseObject({ "@type": z.literal("Organization"), name: z.string() }),
  datePublished: z.string().optional(),
  keywords: z.array(z.string()),
  distribution: z.array(
    looseObject({
      "@type": z.literal("DataDownload"),
      contentUrl: z.string(),
      encodingFormat: z.string(),
      contentSize: z.string(),
    }),
  ),
  includedInDataCatalog: looseObject({ "@type": z.literal("DataCatalog"), name: z.string(), url: z.string() }),
}).openapi("SchemaOrgDataset", {
  description:
    "schema.org `Dataset` as JSON-LD, with the properties dataset search engines require and recommend; `contributor` lists the " +
    "contributors credited by name (with their ORCID iD).",
});

export const DataCiteJsonSchema = looseObject({
  id: z.string().optional().openapi({ description: "The DOI as a URL, once registered." }),
  doi: z.string().optional(),
  url: z.string(),
  types: looseObject({ resourceTypeGeneral: z.literal("Dataset") }),
  titles: z.array(looseObject({ title: z.string() })),
  creators: z.array(looseObject({ name: z.string() })),
  publisher: z.string(),
  publicationYear: z.number().int(),
  version: z.string().optional(),
  contributors: z.array(looseObject({ name: z.string(), contributorType: z.string() })),
  relatedIdentifiers: z.array(looseObject({ relatedIdentifier: z.string(), relatedIdentifierType: z.string(), relationType: z.string() })),
  rightsList: z.array(looseObject({ rights: z.string() })),
  schemaVersion: z.string(),
}).openapi("DataCiteJson", {
  description: "The release's DataCite Metadata Schema 4 record (the REST API's attribute names), as registered with DataCite.",
});

export const CslJsonSchema = looseObject({
  id: z.string(),
  type: z.literal("dataset"),
  title: z.string(),
  version: z.string(),
  publisher: z.string(),
  author: z.array(looseObject({ literal: z.string() })),
  issued: looseObject({ "date-parts": z.array(z.array(z.number().int())) }),
  DOI: z.string().optional(),
  URL: z.string(),
}).openapi("CslJson", { description: "One CSL-JSON (citeproc JSON) item, an object as DOI content negotiation gives it." });
