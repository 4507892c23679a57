/**
 * The research-file allow-list (decisions.md, Media): which extensions may be uploaded on the
 * file routes, which declared types go with each, what the bytes must start with where the
 * format has a signature, and the type the file is served with.
 */

/** How a format's bytes are checked. */
type Check =
  /** UTF-8 text without NUL bytes (csv, tsv, txt, md, json, the ENVI header also starts with `ENVI`). */
  | { kind: "text"; startsWith?: string }
  /** One of the byte signatures at one of the offsets. */
  | { kind: "magic"; signatures: readonly (readonly number[])[]; offsets?: readonly number[] }
  /** A ZIP archive (Office Open XML) holding an entry under `folder`. */
  | { kind: "ooxml"; folder: string }
  /** Raw data (ENVI .dat/.img/.raw) has no signature to check. */
  | { kind: "none" };

export interface FileFormat {
  /** Served as this type. */
  contentType: string;
  /** Declared part types accepted besides `application/octet-stream` (what a client sends when it does not know). */
  declared: readonly string[];
  check: Check;
}

const bytesOf = (text: string) => Array.from(text, (ch) => ch.charCodeAt(0));
const TIFF = [bytesOf("II*\0"), bytesOf("MM\0*"), bytesOf("II+\0"), bytesOf("MM\0+")];
const HDF5 = [[0x89, ...bytesOf("HDF\r\n"), 0x1a, 0x0a]];
const OOXML = "application/vnd.openxmlformats-officedocument.";

const text = (contentType: string, declared: readonly string[], startsWith?: string): FileFormat => ({
  contentType: `${contentType}; charset=utf-8`,
  declared: [contentType, ...declared],
  check: { kind: "text", startsWith },
});

/** Formats by lower-case extension. */
export const RESEARCH_FILE_FORMATS: Readonly<Record<string, FileFormat>> = {
  csv: text("text/csv", ["application/csv", "text/plain", "application/vnd.ms-excel"]),
  tsv: text("text/tab-separated-values", ["text/plain"]),
  txt: text("text/plain", []),
  md: text("text/markdown", ["text/x-markdown", "text/plain"]),
  json: text("application/json", ["text/json", "text/plain"]),
  pdf: { contentType: "application/pdf", declared: ["application/pdf"], check: { kind: "magic", signatures: [bytesOf("%PDF-")] } },
  docx: {
    contentType: `${OOXML}wordprocessingml.document`,
    declared: [`${OOXML}wordprocessingml.document`],
    check: { kind: "ooxml", folder: "word/" },
  },
  xlsx: { contentType: `${OOXML}spreadsheetml.sheet`, declared: [`${OOXML}spreadsheetml.sheet`], check: { kind: "ooxml", folder: "xl/" } },
  pptx: {
    contentType: `${OOXML}presentationml.presentation`,
    declared: [`${OOXML}presentationml.presentation`],
    check: { kind: "ooxml", folder: "ppt/" },
  },
  hdr: text("text/plain", ["application/x-envi"], "ENVI"),
  dat: { contentType: "application/octet-stream", declared: [], check: { kind: "none" } },
  img: { contentType: "application/octet-stream", declared: [], check: { kind: "none" } },
  raw: { contentType: "application/octet-stream", declared: [], check: { kind: "none" } },
  // An HDF5 file may start with a user block of 512, 1024, 2048... bytes before its signature.
  h5: {
    contentType: "application/x-hdf5",
    declared: ["application/x-hdf5", "application/x-hdf"],
    check: { kind: "magic", signatures: HDF5, offsets: [0, 512, 1024, 2048, 4096] },
  },
  hdf5: {
    contentType: "application/x-hdf5",
    declared: ["application/x-hdf5", "application/x-hdf"],
    check: { kind: "magic", signatures: HDF5, offsets: [0, 512, 1024, 2048, 4096] },
  },
  ntf: {
    contentType: "application/vnd.nitf",
    declared: ["application/vnd.nitf"],
    check: { kind: "magic", signatures: [bytesOf("NITF"), bytesOf("NSIF")] },
  },
  nitf: {
    contentType: "application/vnd.nitf",
    declared: ["application/vnd.nitf"],
    check: { kind: "magic", signatures: [bytesOf("NITF"), bytesOf("NSIF")] },
  },
  tif: { contentType: "image/tiff", declared: ["image/tiff"], check: { kind: "magic", signatures: TIFF } },
  tiff: { contentType: "image/tiff", declared: ["image/tiff"], check: { kind: "magic", signatures: TIFF } },
};

/** The extensions of the allow-list, for messages and documentation. */
export const RESEARCH_FILE_EXTENSIONS = Object.keys(RESEARCH_FILE_FORMATS);

/** The lower-case extension of a file name (after the last dot), or null when it has none. */
export function extensionOf(filename: string): string | null {
  const dot = filename.lastIndexOf(".");
  if (dot <= 0 || dot === filename.length - 1) return null;
  return filename.slice(dot + 1).toLowerCase();
}

/** A declared content type without parameters, lower-cased (`Text/CSV; charset=x` -> `text/csv`). */
export function essenceOf(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

/** Whether a part declared as `declaredType` may carry a file of `format`. */
export function declaredTypeFits(format: FileFormat, declaredType: string): boolean {
  const essence = essenceOf(declaredType);
  return essence === "application/octet-stream" || format.declared.includes(essence);
}

const matchesAt = (bytes: Uint8Array, signature: readonly number[], offset: number) =>
  bytes.length >= offset + signature.length && signature.every((value, i) => bytes[offset + i] === value);

/**
 * Whether the bytes are what the format says; null when they are, otherwise why not. Text is
 * decoded in 64 KiB pieces so a 50 MiB file never becomes one large string.
 */
export function checkFileBytes(format: FileFormat, bytes: Uint8Array): string | null {
  const { check } = format;
  switch (check.kind) {
    case "none":
      return null;
    case "magic": {
      const offsets = check.offsets ?? [0];
      const found = offsets.some((offset) => check.signatures.some((signature) => matchesAt(bytes, signature, offset)));
      return found ? null : "the bytes do not start with the format's signature";
    }
    case "ooxml":
      return isZipWith(bytes, check.folder) ? null : `the bytes are not an Office Open XML package with a ${check.folder} part`;
    case "text":
      if (check.startsWith && !matchesAt(bytes, bytesOf(check.startsWith), 0)) return `the file does not start with "${check.startsWith}"`;
      return isUtf8Text(bytes) ? null : "the file is not UTF-8 text";
  }
}

function isUtf8Text(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  try {
    for (let offset = 0; offset < bytes.length; offset += 65_536) {
      decoder.decode(bytes.subarray(offset, offset + 65_536), { stream: true });
    }
    decoder.decode();
    return true;
  } catch {
    return false;
  }
}

/** A ZIP local header at the start and, in the central directory near the end, an entry name under `folder`. */
function isZipWith(bytes: Uint8Array, folder: string): boolean {
  if (!matchesAt(bytes, [0x50, 0x4b, 0x03, 0x04], 0)) return false;
  const tail = bytes.subarray(Math.max(0, bytes.length - 1_048_576));
  const needle = bytesOf(folder);
  // Central directory headers (PK\1\2) hold the entry name at offset 46.
  for (let i = tail.indexOf(0x50); i !== -1 && i + 46 + needle.length <= tail.length; i = tail.indexOf(0x50, i + 1)) {
    if (tail[i + 1] === 0x4b && tail[i + 2] === 0x01 && tail[i + 3] === 0x02 && matchesAt(tail, needle, i + 46)) return true;
  }
  return false;
}
