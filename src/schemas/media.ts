import { z } from "@hono/zod-openapi";
import { MAX_SERVED_JSON_DEPTH, storedJsonObject } from "../lib/json-bounds";
import { isoSeconds } from "../lib/time";
import { type FileRow, type ImageRow, thumbnailUrl, uploadUrl } from "../services/media/records";
import type { VideoRow } from "../services/products/records";

// The media shapes (images, research files, videos) of the API and their mappers: the core's
// record routes and the camera plugin's captures answer with them, so they live outside both.

/** An ISO 8601 time in UTC, to the second. */
export const TimestampSchema = z.string().openapi({ example: "2026-05-01T12:00:00Z" });
const timestamp = TimestampSchema;

export const STORED_METADATA =
  "The free-form JSON object as written. Metadata stored before the bounds were enforced that is not an object or nests deeper " +
  `than ${MAX_SERVED_JSON_DEPTH} levels reads as null.`;

export const VideoSchema = z
  .object({
    id: z.number().int(),
    url: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    video_metadata: z.record(z.string(), z.unknown()).nullable().openapi({ description: STORED_METADATA }),
    created_at: timestamp,
  })
  .openapi("Video");

const MediaStatusSchema = z.enum(["pending", "clean", "rejected"]).openapi({
  description:
    "`pending` from the upload until the media job has scanned it (and decoded an image in full); `clean` once it passed, and " +
    "only then are its URLs served; `rejected` when it failed the malware scan, could not be decoded or could not be scanned: " +
    "never served (its URLs answer 404), its bytes removed and its size released from the owner's quota. The record's owner " +
    "and a superuser with TOTP see pending and rejected items in the record's detail and media lists, and one by one; " +
    "everyone else sees clean media only, and exports hold clean media only. A rejected item stays until it is deleted.",
});

const MediaRejectionSchema = z
  .enum(["malware", "undecodable", "unscanned"])
  .nullable()
  .openapi({
    description:
      "Why a `rejected` item was rejected, null otherwise: `malware` (a scanner found a threat), `undecodable` (the image's " +
      "data could not be decoded, for instance a corrupt or truncated JPEG), `unscanned` (the scan kept failing; upload it again).",
  });

export const ImageSchema = z
  .object({
    id: z.string().openapi({ description: "32 lowercase hex characters.", example: "9f86d081884c7d659a2feaa0c55ad015" }),
    filename: z.string(),
    description: z.string().nullable(),
    image_metadata: z.record(z.string(), z.unknown()).nullable().openapi({ description: STORED_METADATA }),
    image_url: z.string().openapi({ description: "Absolute URL of the sanitised image under `/uploads/images/`." }),
    thumbnail_url: z
      .string()
      .openapi({ description: "Absolute URL of its 200 px wide thumbnail; the image itself until the thumbnail is made." }),
    status: MediaStatusSchema,
    rejected_reason: MediaRejectionSchema,
    created_at: timestamp,
  })
  .openapi("Image", {
    example: {
      id: "9f86d081884c7d659a2feaa0c55ad015",
      filename: "back-cover.jpg",
      description: "Back cover removed",
      image_metadata: null,
      image_url: "https://api.example.org/uploads/images/3f2a….jpg",
      thumbnail_url: "https://api.example.org/uploads/images/thumbnails/200/3f2a….jpg",
      status: "clean",
      rejected_reason: null,
      created_at: "2026-05-01T12:00:00Z",
    },
  });

export const FileSchema = z
  .object({
    id: z.string().openapi({ description: "32 lowercase hex characters.", example: "2c26b46b68ffc68ff99b453c1d304134" }),
    filename: z.string(),
    description: z.string().nullable(),
    file_url: z.string().openapi({ description: "Absolute URL of the file under `/uploads/files/`." }),
    status: MediaStatusSchema,
    rejected_reason: MediaRejectionSchema,
    created_at: timestamp,
  })
  .openapi("ResearchFile");

export function toImage(row: ImageRow, origin: string): z.infer<typeof ImageSchema> {
  return {
    id: row.id,
    filename: row.filename,
    description: row.description,
    image_metadata: storedJsonObject(row.image_metadata),
    image_url: uploadUrl(origin, "images", row.storage_key),
    thumbnail_url: thumbnailUrl(origin, row),
    status: row.status,
    rejected_reason: row.rejected_reason,
    created_at: isoSeconds(row.created_at * 1000),
  };
}

export function toFile(row: FileRow, origin: string): z.infer<typeof FileSchema> {
  return {
    id: row.id,
    filename: row.filename,
    description: row.description,
    file_url: uploadUrl(origin, "files", row.storage_key),
    status: row.status,
    rejected_reason: row.rejected_reason,
    created_at: isoSeconds(row.created_at * 1000),
  };
}

export function toVideo(row: VideoRow): z.infer<typeof VideoSchema> {
  return {
    id: row.id,
    url: row.url,
    title: row.title,
    description: row.description,
    video_metadata: storedJsonObject(row.video_metadata),
    created_at: isoSeconds(row.created_at * 1000),
  };
}
