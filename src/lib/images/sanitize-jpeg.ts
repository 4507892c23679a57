import { ByteSink, startsWith, u16be } from "./bytes";
import { filterExif, ImageStructureError } from "./exif";
import { isSupportedSof } from "./formats";
import type { SanitizedImage } from "./sanitized-image";

function fail(why: string): never {
  throw new ImageStructureError(`JPEG: ${why}`);
}

/** Markers that carry decoding parameters (T.81 B.2.4): DHT, DAC, DQT, DNL, DRI. */
const TABLE_MARKERS = new Set([0xc4, 0xcc, 0xdb, 0xdc, 0xdd]);

/**
 * Index of the marker that ends the entropy-coded data starting at `from`. Inside it 0xFF is only
 * followed by 0x00 (stuffing), RSTn, or fill bytes before a marker (T.81 B.1.1.5, F.1.2.3).
 */
function entropyEnd(b: Uint8Array, from: number): number {
  let i = from;
  for (;;) {
    i = b.indexOf(0xff, i);
    if (i < 0 || i + 1 >= b.length) fail("truncated scan data");
    const next = b[i + 1]!;
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) i += 2;
    else if (next === 0xff) i += 1;
    else return i;
  }
}

/** The JFIF APP0 without its optional thumbnail (a second, unfiltered copy of the picture). */
function jfifWithoutThumbnail(payload: Uint8Array, segment: Uint8Array): Uint8Array | null {
  if (payload.length < 14) return null;
  if (payload.length === 14 && payload[12] === 0 && payload[13] === 0) return segment;
  const out = new Uint8Array(2 + 2 + 14);
  out.set([0xff, 0xe0, 0x00, 16]);
  out.set(payload.subarray(0, 12), 4);
  return out; // thumbnail width and height stay 0
}

type Result = Omit<SanitizedImage, "format">;

/**
 * Walks the markers from SOI, copying decoding segments and the entropy-coded data verbatim and
 * dropping every metadata segment; the Exif APP1 is replaced by its allow-listed rebuild.
 */
export function sanitizeJpeg(b: Uint8Array): Result {
  const n = b.length;
  if (n < 4 || b[0] !== 0xff || b[1] !== 0xd8) fail("missing SOI");
  const sink = new ByteSink();
  sink.push(b.subarray(0, 2));
  let size: { width: number; height: number } | null = null;
  let orientation = 1;
  let metadata: Record<string, string | number> = {};
  let exifSeen = false;
  let scans = 0;
  let pos = 2;
  for (;;) {
    if (pos + 1 >= n) fail("truncated before EOI");
    if (b[pos] !== 0xff) fail(`expected a marker at ${pos}`);
    if (b[pos + 1] === 0xff) {
      pos++; // fill byte (B.1.1.2): not copied
      continue;
    }
    const marker = b[pos + 1]!;
    if (marker === 0xd9) {
      if (scans === 0) fail("EOI before any scan");
      sink.push(b.subarray(pos, pos + 2));
      if (pos + 2 !== n) fail("data after EOI");
      break;
    }
    if (marker === 0xd8 || marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      fail(`unexpected marker 0x${marker.toString(16)}`);
    }
    if (pos + 4 > n) fail("truncated segment header");
    const len = u16be(b, pos + 2);
    const end = pos + 2 + len;
    if (len < 2 || end > n) fail("segment runs past the end");
    const segment = b.subarray(pos, end);
    const payload = b.subarray(pos + 4, end);

    if (isSupportedSof(marker)) {
      if (size) fail("more than one frame header");
      if (len < 8 + 3 * (payload[5] ?? 0) || payload[5] === 0) fail("bad frame header");
      size = { width: u16be(payload, 3), height: u16be(payload, 1) };
      if (size.width === 0 || size.height === 0) fail("frame without dimensions (DNL is not supported)");
      sink.push(segment);
    } else if (marker === 0xda) {
      if (!size) fail("scan before the frame header");
      const components = payload[0] ?? 0;
      if (components < 1 || components > 4 || len !== 6 + 2 * components) fail("bad scan header");
      const dataEnd = entropyEnd(b, end);
      sink.push(b.subarray(pos, dataEnd)); // header and entropy-coded data, untouched
      scans++;
      pos = dataEnd;
      continue;
    } else if (TABLE_MARKERS.has(marker)) {
      sink.push(segment);
    } else if (marker === 0xe0) {
      if (startsWith(payload, 0, "JFIF\0")) {
        const jfif = jfifWithoutThumbnail(payload, segment);
        if (jfif) sink.push(jfif);
      }
    } else if (marker === 0xe1) {
      if (!exifSeen && startsWith(payload, 0, "Exif\0\0")) {
        exifSeen = true;
        const rebuilt = exifSegment(payload.subarray(6));
        if (rebuilt) {
          orientation = rebuilt.orientation;
          metadata = rebuilt.metadata;
          if (rebuilt.segment) sink.push(rebuilt.segment);
        }
      }
    } else if (marker === 0xe2) {
      if (startsWith(payload, 0, "ICC_PROFILE\0")) sink.push(segment);
    } else if (marker === 0xee) {
      if (startsWith(payload, 0, "Adobe")) sink.push(segment);
    } else if (marker === 0xfe || (marker >= 0xe0 && marker <= 0xef)) {
      // COM and other APPn: dropped.
    } else {
      fail(`unsupported marker 0x${marker.toString(16)}`);
    }
    pos = end;
  }
  if (!size) fail("no frame header");
  return { bytes: sink.finish(), width: size.width, height: size.height, orientation, metadata };
}

/**
 * The rebuilt Exif APP1, or null when the block is unreadable: an unreadable block is dropped
 * rather than refused, since dropping can only remove metadata.
 */
function exifSegment(tiff: Uint8Array) {
  let result;
  try {
    result = filterExif(tiff);
  } catch (e) {
    if (e instanceof ImageStructureError) return null;
    throw e;
  }
  let segment: Uint8Array | null = null;
  if (result.tiff) {
    const len = 2 + 6 + result.tiff.length; // bounded well below 65535 by the allow-list
    segment = new Uint8Array(2 + len);
    segment.set([0xff, 0xe1, len >> 8, len & 0xff, 0x45, 0x78, 0x69, 0x66, 0, 0]);
    segment.set(result.tiff, 10);
  }
  return { segment, orientation: result.orientation, metadata: result.metadata };
}
