/**
 * EXIF allow-listing on the TIFF structure (TIFF 6.0 section 2, EXIF 2.32 section 4.6). Only IFD0
 * and its Exif sub-IFD are read; IFD1 (thumbnail), GPS, Interop and MakerNote are never followed,
 * so a crafted file cannot make the parser loop or recurse.
 */

/** A file whose encoded structure cannot be read safely. */
export class ImageStructureError extends Error {
  override name = "ImageStructureError";
}

/**
 * A well-formed file in a variant of its format that the decoders here cannot decode (RLE BMP,
 * arithmetic-coded or lossless JPEG, CMYK...): refused at upload as an unsupported type, since
 * the media job could never decode it.
 */
export class UnsupportedImageError extends ImageStructureError {
  override name = "UnsupportedImageError";
}

type Kind = "ascii" | "rational" | "int";
interface TagSpec {
  id: number;
  name: string;
  ifd: 0 | 1; // 0: IFD0, 1: Exif sub-IFD
  kind: Kind;
}

const TAGS: readonly TagSpec[] = [
  { id: 0x010f, name: "Make", ifd: 0, kind: "ascii" },
  { id: 0x0110, name: "Model", ifd: 0, kind: "ascii" },
  { id: 0xa433, name: "LensMake", ifd: 1, kind: "ascii" },
  { id: 0xa434, name: "LensModel", ifd: 1, kind: "ascii" },
  { id: 0x829a, name: "ExposureTime", ifd: 1, kind: "rational" },
  { id: 0x829d, name: "FNumber", ifd: 1, kind: "rational" },
  { id: 0x8822, name: "ExposureProgram", ifd: 1, kind: "int" },
  { id: 0x8827, name: "ISO", ifd: 1, kind: "int" },
  { id: 0x920a, name: "FocalLength", ifd: 1, kind: "rational" },
  { id: 0xa405, name: "FocalLengthIn35mmFilm", ifd: 1, kind: "int" },
  { id: 0xa403, name: "WhiteBalance", ifd: 1, kind: "int" },
  { id: 0x9003, name: "DateTimeOriginal", ifd: 1, kind: "ascii" },
];

/** Names of the kept tags, for documentation and tests. */
export const EXIF_ALLOW_LIST: readonly string[] = TAGS.map((t) => t.name);

const TAG_ORIENTATION = 0x0112;
const TAG_EXIF_IFD = 0x8769;
const TYPE_ASCII = 2;
const TYPE_SHORT = 3;
const TYPE_LONG = 4;
const TYPE_RATIONAL = 5;
const TYPE_IFD = 13;
const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };
/** Longer strings are not camera or lens names; skipping them bounds the output's size. */
const MAX_STRING_BYTES = 256;

export interface ExifResult {
  /** New TIFF with only allow-listed tags (same byte order), or null when none is left. */
  tiff: Uint8Array | null;
  /** The Orientation value (1..8), 1 when absent or invalid. Never written to `tiff`. */
  orientation: number;
  /** Kept values: strings trimmed of NULs, rationals as numbers, keyed by tag name. */
  metadata: Record<string, string | number>;
}

interface Entry {
  tag: number;
  type: number;
  count: number;
  /** The value's bytes, already in the block's byte order. */
  data: Uint8Array;
}

interface Reader {
  b: Uint8Array;
  le: boolean;
  u16(o: number): number;
  u32(o: number): number;
}

function reader(b: Uint8Array, le: boolean): Reader {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { b, le, u16: (o) => dv.getUint16(o, le), u32: (o) => dv.getUint32(o, le) };
}

/** Raw entries of one IFD; null when its table lies outside the block. */
function readIfd(r: Reader, offset: number): Entry[] | null {
  const n = r.b.length;
  if (offset < 8 || offset + 2 > n) return null;
  const count = r.u16(offset);
  if (offset + 2 + count * 12 > n) return null;
  const entries: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const e = offset + 2 + i * 12;
    const type = r.u16(e + 2);
    const valueCount = r.u32(e + 4);
    const size = TYPE_SIZES[type];
    if (size === undefined) continue;
    const byteLength = size * valueCount; // at most 8 * (2^32 - 1): exact in a double
    let start = e + 8;
    if (byteLength > 4) {
      start = r.u32(e + 8);
      if (start + byteLength > n) continue; // value outside the block: skip the tag, not the file
    }
    entries.push({ tag: r.u16(e), type, count: valueCount, data: r.b.subarray(start, start + byteLength) });
  }
  return entries;
}

function firstInt(r: Reader, e: Entry): number | null {
  if (e.count < 1) return null;
  if (e.type === TYPE_SHORT) return r.le ? e.data[0]! | (e.data[1]! << 8) : (e.data[0]! << 8) | e.data[1]!;
  if (e.type === TYPE_LONG || e.type === TYPE_IFD) return reader(e.data, r.le).u32(0);
  return null;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function cleanString(data: Uint8Array): string {
  const nul = data.indexOf(0);
  const text = decoder.decode(nul >= 0 ? data.subarray(0, nul) : data);
  // Control characters have no place in a camera name and would only trouble consumers.
  return text.replace(/[\u0000-\u001f\u007f]/g, "").trim();
}

interface Kept {
  spec: TagSpec;
  entry: Entry;
  value: string | number;
}

/** Validates one allow-listed entry and gives its value and canonical re-encoding. */
function keep(r: Reader, spec: TagSpec, e: Entry): Kept | null {
  if (spec.kind === "ascii") {
    if (e.type !== TYPE_ASCII || e.count > MAX_STRING_BYTES) return null;
    const value = cleanString(e.data);
    if (!value) return null;
    const bytes = encoder.encode(value);
    const data = new Uint8Array(bytes.length + 1);
    data.set(bytes);
    return { spec, value, entry: { tag: spec.id, type: TYPE_ASCII, count: data.length, data } };
  }
  if (spec.kind === "rational") {
    if (e.type !== TYPE_RATIONAL || e.count < 1) return null;
    const src = reader(e.data, r.le);
    const num = src.u32(0);
    const den = src.u32(4);
    if (den === 0) return null;
    return { spec, value: num / den, entry: { tag: spec.id, type: TYPE_RATIONAL, count: 1, data: e.data.slice(0, 8) } };
  }
  const value = firstInt(r, e);
  if (value === null) return null;
  const short = e.type === TYPE_SHORT;
  const data = new Uint8Array(short ? 2 : 4);
  if (short) new DataView(data.buffer).setUint16(0, value, r.le);
  else new DataView(data.buffer).setUint32(0, value, r.le);
  return { spec, value, entry: { tag: spec.id, type: short ? TYPE_SHORT : TYPE_LONG, count: 1, data } };
}

function collect(r: Reader, entries: Entry[], ifd: 0 | 1, into: Map<number, Kept>): void {
  for (const e of entries) {
    const spec = TAGS.find((t) => t.id === e.tag && t.ifd === ifd);
    if (!spec || into.has(e.tag)) continue; // first occurrence wins
    const kept = keep(r, spec, e);
    if (kept) into.set(e.tag, kept);
  }
}

/**
 * Parses a TIFF/EXIF block defensively and rebuilds it with the allow-list. Throws
 * `ImageStructureError` when the header or IFD0 cannot be read; a broken Exif sub-IFD or a tag
 * whose value lies outside the block is skipped.
 */
export function filterExif(tiff: Uint8Array): ExifResult {
  if (tiff.length < 8) throw new ImageStructureError("EXIF block too short");
  const order = String.fromCharCode(tiff[0]!, tiff[1]!);
  if (order !== "II" && order !== "MM") throw new ImageStructureError("EXIF block has no TIFF byte order");
  const r = reader(tiff, order === "II");
  if (r.u16(2) !== 42) throw new ImageStructureError("EXIF block has no TIFF magic number");
  const ifd0Offset = r.u32(4);
  const ifd0 = readIfd(r, ifd0Offset);
  if (!ifd0) throw new ImageStructureError("EXIF IFD0 lies outside the block");

  let orientation = 1;
  const kept = new Map<number, Kept>();
  collect(r, ifd0, 0, kept);
  const orientationEntry = ifd0.find((e) => e.tag === TAG_ORIENTATION);
  const o = orientationEntry ? firstInt(r, orientationEntry) : null;
  if (o !== null && o >= 1 && o <= 8) orientation = o;

  const pointer = ifd0.find((e) => e.tag === TAG_EXIF_IFD);
  const exifOffset = pointer ? firstInt(r, pointer) : null;
  if (exifOffset !== null && exifOffset !== ifd0Offset) {
    const exif = readIfd(r, exifOffset);
    if (exif) collect(r, exif, 1, kept);
  }

  const metadata: Record<string, string | number> = {};
  for (const spec of TAGS) {
    const k = kept.get(spec.id);
    if (k) metadata[spec.name] = k.value;
  }
  const byIfd = (ifd: 0 | 1) =>
    [...kept.values()]
      .filter((k) => k.spec.ifd === ifd)
      .map((k) => k.entry)
      .sort((a, b) => a.tag - b.tag);
  return { tiff: writeTiff(r.le, byIfd(0), byIfd(1)), orientation, metadata };
}

const even = (n: number) => n + (n & 1);
const ifdSize = (entries: Entry[]) =>
  2 + entries.length * 12 + 4 + entries.reduce((s, e) => s + (e.data.length > 4 ? even(e.data.length) : 0), 0);

/** Header, IFD0 with its values, then the Exif IFD with its values; every offset even. */
function writeTiff(le: boolean, ifd0: Entry[], exif: Entry[]): Uint8Array | null {
  if (ifd0.length === 0 && exif.length === 0) return null;
  const pointer: Entry = { tag: TAG_EXIF_IFD, type: TYPE_LONG, count: 1, data: new Uint8Array(4) };
  const first = exif.length > 0 ? [...ifd0, pointer].sort((a, b) => a.tag - b.tag) : ifd0;
  const exifOffset = 8 + ifdSize(first);
  if (exif.length > 0) new DataView(pointer.data.buffer).setUint32(0, exifOffset, le);
  const out = new Uint8Array(exifOffset + (exif.length > 0 ? ifdSize(exif) : 0));
  const dv = new DataView(out.buffer);
  out[0] = out[1] = le ? 0x49 : 0x4d;
  dv.setUint16(2, 42, le);
  dv.setUint32(4, 8, le);
  const writeIfd = (offset: number, entries: Entry[]) => {
    dv.setUint16(offset, entries.length, le);
    let data = offset + 2 + entries.length * 12 + 4; // the next-IFD offset stays 0: no IFD1
    entries.forEach((e, i) => {
      const p = offset + 2 + i * 12;
      dv.setUint16(p, e.tag, le);
      dv.setUint16(p + 2, e.type, le);
      dv.setUint32(p + 4, e.count, le);
      if (e.data.length <= 4) {
        out.set(e.data, p + 8);
      } else {
        dv.setUint32(p + 8, data, le);
        out.set(e.data, data);
        data += even(e.data.length);
      }
    });
  };
  writeIfd(8, first);
  if (exif.length > 0) writeIfd(exifOffset, exif);
  return out;
}
