import { z } from "@hono/zod-openapi";
import { RELEASE_STATUSES } from "../../db/schema";
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
  citation: z.string().nullable().openapi({
    description: "A suggested citation (also in README.md, with BibTeX); null until the snapshot is taken.",
    example: "relab (2026). relab dataset, first release (Version 2026.1) [Data set]. https://api.relab.example/v1/releases/2026.1",
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
