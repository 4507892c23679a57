import { ascii, ByteSink, startsWith, u32le } from "./bytes";
import { filterExif, ImageStructureError } from "./exif";
import { imageDimensions } from "./formats";
import type { SanitizedImage } from "./sanitized-image";

function fail(why: string): never {
  throw new ImageStructureError(`WebP: ${why}`);
}

/** Chunks that make up the picture (WebP container spec); EXIF is rebuilt, XMP and unknowns go. */
const KEEP = new Set(["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF", "ICCP"]);
const FLAG_EXIF = 0x08;
const FLAG_XMP = 0x04;

interface Chunk {
  fourcc: string;
  start: number;
  dataStart: number;
  dataEnd: number;
}

type Result = Omit<SanitizedImage, "format">;

/** Walks the RIFF chunks, keeps the picture, rebuilds EXIF, fixes the VP8X flags and RIFF size. */
export function sanitizeWebp(b: Uint8Array): Result {
  const n = b.length;
  if (n < 20 || !startsWith(b, 0, "RIFF") || !startsWith(b, 8, "WEBP")) fail("bad RIFF header");
  const riffEnd = 8 + u32le(b, 4);
  if (riffEnd > n) fail("truncated");
  if (riffEnd < n) fail("data after the RIFF size");
  const chunks: Chunk[] = [];
  for (let pos = 12; pos < riffEnd; ) {
    if (pos + 8 > riffEnd) fail("truncated chunk header");
    const size = u32le(b, pos + 4);
    const dataEnd = pos + 8 + size;
    if (dataEnd > riffEnd) fail("chunk runs past the end");
    chunks.push({ fourcc: ascii(b, pos, 4), start: pos, dataStart: pos + 8, dataEnd });
    // Chunks are padded to even sizes; a missing pad after the last chunk is tolerated.
    pos = Math.min(dataEnd + (size & 1), riffEnd);
  }
  const first = chunks[0]?.fourcc;
  if (first !== "VP8 " && first !== "VP8L" && first !== "VP8X") fail("no image chunk first");
  const extended = first === "VP8X";
  if (extended && chunks[0]!.dataEnd - chunks[0]!.dataStart < 10) fail("short VP8X");
  if (!chunks.some((c) => c.fourcc === "VP8 " || c.fourcc === "VP8L" || c.fourcc === "ANMF")) fail("no image data");
  const size = imageDimensions(b, "webp") ?? fail("unreadable dimensions");

  let orientation = 1;
  let metadata: Record<string, string | number> = {};
  let exif: Uint8Array | null = null;
  const exifChunk = chunks.find((c) => c.fourcc === "EXIF");
  if (exifChunk) {
    const data = b.subarray(exifChunk.dataStart, exifChunk.dataEnd);
    try {
      const result = filterExif(startsWith(data, 0, "Exif\0\0") ? data.subarray(6) : data);
      orientation = result.orientation;
      metadata = result.metadata;
      exif = extended ? result.tiff : null; // a simple-format file has no VP8X to declare it in
    } catch (e) {
      if (!(e instanceof ImageStructureError)) throw e; // unreadable: dropped
    }
  }

  const sink = new ByteSink();
  const header = new Uint8Array(12);
  sink.push(header); // RIFF size filled in below, once the output length is known
  for (const c of chunks) {
    if (c.fourcc === "VP8X") {
      const copy = b.slice(c.start, c.dataEnd + ((c.dataEnd - c.dataStart) & 1));
      copy[8] = (copy[8]! & ~(FLAG_EXIF | FLAG_XMP)) | (exif ? FLAG_EXIF : 0);
      sink.push(copy);
    } else if (c === exifChunk) {
      if (exif) sink.push(riffChunk("EXIF", exif));
    } else if (KEEP.has(c.fourcc)) {
      sink.push(b.subarray(c.start, c.dataEnd));
      if ((c.dataEnd - c.dataStart) & 1) sink.push(c.dataEnd < n ? b.subarray(c.dataEnd, c.dataEnd + 1) : new Uint8Array(1));
    }
  }
  header.set(b.subarray(0, 12));
  new DataView(header.buffer).setUint32(4, sink.length - 8, true);
  return { bytes: sink.finish(), ...size, orientation, metadata };
}

function riffChunk(fourcc: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + data.length + (data.length & 1));
  for (let i = 0; i < 4; i++) out[i] = fourcc.charCodeAt(i);
  new DataView(out.buffer).setUint32(4, data.length, true);
  out.set(data, 8);
  return out;
}
