import {
  checkFileBytes,
  declaredTypeFits,
  essenceOf,
  extensionOf,
  RESEARCH_FILE_EXTENSIONS,
  RESEARCH_FILE_FORMATS,
} from "../../lib/file-formats";
import { assertDecodableVariant, decodablePixels } from "../../lib/images/decodable";
import { ImageStructureError, UnsupportedImageError } from "../../lib/images/exif";
import { IMAGE_FORMATS, IMAGE_TYPES, type ImageFormat, imageDimensions, sniffImageFormat } from "../../lib/images/formats";
import { sanitizeImage } from "../../lib/images/sanitize";
import { jsonBoundsViolation } from "../../lib/json-bounds";
import { ApiError } from "../../lib/problem";
import { textViolation } from "../../lib/text";
import { assertOrientable, uprightSize } from "./orient";
import { MAX_RESEARCH_FILE_BYTES, ROLE_LIMITS } from "./quotas";
import { contentHash } from "./storage";

/** Longest `description` of an upload, as for records. */
export const MAX_MEDIA_DESCRIPTION = 500;
/** Longest `image_metadata` JSON text. */
export const MAX_IMAGE_METADATA_CHARS = 10_000;

type Role = keyof typeof ROLE_LIMITS;

/** The form fields of an upload, checked. */
export interface UploadForm {
  file: File;
  filename: string;
  description: string | null;
  /** The client's `image_metadata` object (images only). */
  metadata: Record<string, unknown> | null;
}

/**
 * An upload ready to store: the bytes the media job will scan and what the row records. An image's
 * `orientation` (EXIF, 1..8) is still to be applied by the media job; `width` and `height` are
 * already the upright ones, and `storageKey` the final content address (`contentHash`).
 */
export interface PreparedUpload {
  bytes: Uint8Array;
  storageKey: string;
  contentType: string;
  filename: string;
  description: string | null;
  image?: { width: number; height: number; metadata: string | null; orientation: number };
}

const field = (name: string, detail: string) =>
  new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request did not pass validation.",
    errors: [{ pointer: `/${name}`, detail }],
  });

const unsupported = (detail: string) => new ApiError(415, { code: "UNSUPPORTED_MEDIA_TYPE", detail });
const mismatch = (detail: string) => new ApiError(415, { code: "MEDIA_TYPE_MISMATCH", detail });

/** The file name as stored: no directories, no control characters, at most 255 characters. */
function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  // eslint-disable-next-line no-control-regex
  return base
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim()
    .slice(0, 255);
}

/** Reads and checks the text fields and the `file` part; 422 with a pointer at the field at fault. */
export function parseUploadForm(form: FormData, kind: "images" | "files"): UploadForm {
  const file = form.get("file") as unknown;
  if (!(file instanceof File)) throw field("file", "A part named `file` holding the upload is required.");
  const filename = cleanFilename(file.name);
  if (!filename) throw field("file", "The file part needs a file name.");
  const description = form.get("description");
  if (description !== null && typeof description !== "string") throw field("description", "Must be text.");
  // Characters (code points), as every text member counts them, not UTF-16 code units.
  if (typeof description === "string" && [...description].length > MAX_MEDIA_DESCRIPTION) {
    throw field("description", `At most ${MAX_MEDIA_DESCRIPTION} characters.`);
  }
  const refused = typeof description === "string" ? textViolation(description, true) : null;
  if (refused) throw field("description", refused);
  if (kind === "files" && form.get("image_metadata") !== null) throw field("image_metadata", "Research files take no image_metadata.");
  const metadata = jsonObjectField(form, "image_metadata");
  return { file, filename, description: description?.trim() || null, metadata };
}

/**
 * A form field holding a JSON object as text (at most 10,000 characters, within the free-form
 * JSON bounds), or null when the field is absent; 422 with a pointer at the field otherwise.
 */
export function jsonObjectField(form: FormData, name: string): Record<string, unknown> | null {
  const raw = form.get(name);
  if (raw === null) return null;
  if (typeof raw !== "string" || raw.length > MAX_IMAGE_METADATA_CHARS) {
    throw field(name, `A JSON object as text, at most ${MAX_IMAGE_METADATA_CHARS} characters.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw field(name, "Not valid JSON.");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw field(name, "Must be a JSON object.");
  const beyond = jsonBoundsViolation(value);
  if (beyond) throw field(name, beyond);
  return value as Record<string, unknown>;
}

/** The cap of the file part for an uploader of `role`. */
export function fileCap(kind: "images" | "files", role: Role): number {
  return kind === "images" ? ROLE_LIMITS[role].imageUploadMaxBytes : MAX_RESEARCH_FILE_BYTES;
}

/** The 413 detail for an upload over `cap`. */
export function tooLargeDetail(kind: "images" | "files", role: Role, cap: number): string {
  return kind === "images" ? `Images are limited to ${cap} bytes for the ${role} role.` : `Research files are limited to ${cap} bytes.`;
}

const STORED_EXTENSION: Record<ImageFormat, string> = { jpeg: "jpg", png: "png", gif: "gif", webp: "webp", bmp: "bmp" };

function imageFormatOf(extension: string | null): ImageFormat | null {
  return IMAGE_FORMATS.find((format) => extension !== null && IMAGE_TYPES[format].extensions.includes(extension)) ?? null;
}

/**
 * Checks an image upload (extension, declared type and magic bytes must agree; size and pixel
 * caps of the uploader's role; a variant of the format the media job can decode; an orientation it
 * can apply) and sanitises it: metadata reduced to the EXIF allow-list. No pixel work: the media
 * job turns the pixels upright (media-orient.ts). Throws the refusal of decisions.md for each failure.
 */
export async function prepareImage(form: UploadForm, role: Role): Promise<PreparedUpload> {
  const extension = extensionOf(form.filename);
  const format = imageFormatOf(extension);
  const allowed = IMAGE_FORMATS.flatMap((f) => IMAGE_TYPES[f].extensions.map((e) => `.${e}`)).join(", ");
  if (!format) throw unsupported(`Images must be named ${allowed}; research files go to the /files routes.`);
  const declared = essenceOf(form.file.type);
  if (declared !== IMAGE_TYPES[format].mime) {
    throw mismatch(`The part declares ${declared || "no type"}, but a .${extension} image is ${IMAGE_TYPES[format].mime}.`);
  }
  const cap = fileCap("images", role);
  if (form.file.size > cap) throw new ApiError(413, { code: "PAYLOAD_TOO_LARGE", detail: tooLargeDetail("images", role, cap) });
  const bytes = new Uint8Array(await form.file.arrayBuffer());
  const sniffed = sniffImageFormat(bytes.subarray(0, 16));
  if (sniffed !== format) {
    throw mismatch(
      `The part declares ${IMAGE_TYPES[format].mime}, but its bytes are ${sniffed ? `a ${sniffed.toUpperCase()} image` : "not an image of an allowed format"}.`,
    );
  }
  const size = imageDimensions(bytes, format);
  if (!size) throw unreadable("its header gives no size");
  const pixels = size.width * size.height;
  // GIF and WebP are decoded whole by the media job, which bounds them lower than the role does.
  const maxPixels = Math.min(ROLE_LIMITS[role].imageUploadMaxPixels, decodablePixels(format));
  if (pixels > maxPixels) {
    throw new ApiError(400, {
      code: "IMAGE_TOO_MANY_PIXELS",
      detail: `Image has ${pixels} pixels, exceeding the maximum allowed ${maxPixels}.`,
    });
  }
  let clean;
  try {
    clean = sanitizeImage(bytes, format);
    assertDecodableVariant(clean.bytes, format);
  } catch (error) {
    if (error instanceof UnsupportedImageError) throw unsupportedVariant(format, error.message);
    if (error instanceof ImageStructureError) throw unreadable(error.message);
    throw error;
  }
  assertOrientable(format, clean.width, clean.height, clean.orientation);
  const upright = uprightSize(clean.width, clean.height, clean.orientation);
  const exif = Object.keys(clean.metadata).length > 0 ? clean.metadata : null;
  const metadata = form.metadata || exif ? { ...form.metadata, ...(exif ? { exif } : {}) } : null;
  return {
    bytes: clean.bytes,
    storageKey: `${await contentHash(clean.bytes, clean.orientation)}.${STORED_EXTENSION[format]}`,
    contentType: IMAGE_TYPES[format].mime,
    filename: form.filename,
    description: form.description,
    image: { ...upright, metadata: metadata ? JSON.stringify(metadata) : null, orientation: clean.orientation },
  };
}

function unsupportedVariant(format: ImageFormat, reason: string): ApiError {
  const hint = format === "bmp" ? "save it as an uncompressed BMP or a PNG" : "save it as a baseline or progressive 8-bit JPEG or a PNG";
  return unsupported(`This image cannot be processed (${reason.replace(/^[A-Z]+: /, "")}); ${hint}.`);
}

function unreadable(reason: string): ApiError {
  return new ApiError(422, { code: "IMAGE_UNREADABLE", detail: `The image cannot be accepted: ${reason}.` });
}

/** Checks a research-file upload (extension, declared type and signature must agree; 50 MiB); the bytes are stored as sent. */
export async function prepareFile(form: UploadForm): Promise<PreparedUpload> {
  const extension = extensionOf(form.filename);
  const format = extension ? RESEARCH_FILE_FORMATS[extension] : undefined;
  if (!format || !extension) {
    const hint = imageFormatOf(extension) ? " Images go to the /images routes." : "";
    throw unsupported(`Research files must be one of ${RESEARCH_FILE_EXTENSIONS.map((e) => `.${e}`).join(", ")}.${hint}`);
  }
  if (!declaredTypeFits(format, form.file.type)) {
    throw mismatch(`The part declares ${essenceOf(form.file.type) || "no type"}, which does not fit a .${extension} file.`);
  }
  if (form.file.size > MAX_RESEARCH_FILE_BYTES) {
    throw new ApiError(413, { code: "PAYLOAD_TOO_LARGE", detail: tooLargeDetail("files", "contributor", MAX_RESEARCH_FILE_BYTES) });
  }
  if (form.file.size === 0) throw field("file", "The file is empty.");
  const bytes = new Uint8Array(await form.file.arrayBuffer());
  const problem = checkFileBytes(format, bytes);
  if (problem) throw mismatch(`This is not a valid .${extension} file: ${problem}.`);
  return {
    bytes,
    storageKey: `${await contentHash(bytes, 1)}.${extension}`,
    contentType: format.contentType,
    filename: form.filename,
    description: form.description,
  };
}
