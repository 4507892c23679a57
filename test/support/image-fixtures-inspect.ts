/** Byte-search and structure helpers shared by the image tests. */

export function indexOfBytes(hay: Uint8Array, needle: Uint8Array | number[] | string, from = 0): number {
  const n = typeof needle === "string" ? new TextEncoder().encode(needle) : Uint8Array.from(needle);
  outer: for (let i = from; i + n.length <= hay.length; i++) {
    for (let k = 0; k < n.length; k++) if (hay[i + k] !== n[k]) continue outer;
    return i;
  }
  return -1;
}

export const contains = (hay: Uint8Array, needle: Uint8Array | number[] | string) => indexOfBytes(hay, needle) >= 0;

export interface JpegSegment {
  marker: number;
  bytes: Uint8Array;
}

/** Segments of a JPEG in order; a SOS segment's bytes include its entropy-coded data. */
export function jpegSegments(b: Uint8Array): JpegSegment[] {
  const out: JpegSegment[] = [];
  let pos = 2;
  while (pos < b.length) {
    const marker = b[pos + 1]!;
    if (marker === 0xd9) break;
    let end = pos + 2 + ((b[pos + 2]! << 8) | b[pos + 3]!);
    if (marker === 0xda) {
      while (!(b[end] === 0xff && b[end + 1] !== 0 && (b[end + 1]! < 0xd0 || b[end + 1]! > 0xd7))) end++;
    }
    out.push({ marker, bytes: b.subarray(pos, end) });
    pos = end;
  }
  return out;
}

/** Everything a decoder reads to produce pixels: frame, tables, scans (APPn and COM left out). */
export function decodingStream(b: Uint8Array): string[] {
  return jpegSegments(b)
    .filter((s) => s.marker < 0xe0 || (s.marker > 0xef && s.marker !== 0xfe))
    .map((s) => Array.from(s.bytes, (v) => v.toString(16).padStart(2, "0")).join(""));
}

/** The TIFF inside the first Exif APP1, or null. */
export function jpegExifTiff(b: Uint8Array): Uint8Array | null {
  const seg = jpegSegments(b).find((s) => s.marker === 0xe1 && contains(s.bytes.subarray(4, 10), "Exif\0\0"));
  return seg ? seg.bytes.subarray(10) : null;
}

/** Tags of IFD0 and of the IFD the Exif pointer names, plus IFD0's next-IFD offset. */
export function tiffTags(t: Uint8Array): { ifd0: number[]; exif: number[]; next: number } {
  const le = t[0] === 0x49;
  const dv = new DataView(t.buffer, t.byteOffset, t.byteLength);
  const list = (o: number) => Array.from({ length: dv.getUint16(o, le) }, (_, i) => dv.getUint16(o + 2 + 12 * i, le));
  const ifd0At = dv.getUint32(4, le);
  const ifd0 = list(ifd0At);
  const pointerIndex = ifd0.indexOf(0x8769);
  const exif = pointerIndex < 0 ? [] : list(dv.getUint32(ifd0At + 2 + 12 * pointerIndex + 8, le));
  return { ifd0, exif, next: dv.getUint32(ifd0At + 2 + 12 * ifd0.length, le) };
}

export interface PngChunk {
  type: string;
  data: Uint8Array;
  crc: number;
}

export function pngChunks(b: Uint8Array): PngChunk[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: PngChunk[] = [];
  for (let pos = 8; pos < b.length; ) {
    const len = dv.getUint32(pos);
    out.push({
      type: String.fromCharCode(...b.subarray(pos + 4, pos + 8)),
      data: b.subarray(pos + 8, pos + 8 + len),
      crc: dv.getUint32(pos + 8 + len),
    });
    pos += 12 + len;
  }
  return out;
}

export function riffChunks(b: Uint8Array): { fourcc: string; data: Uint8Array }[] {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: { fourcc: string; data: Uint8Array }[] = [];
  for (let pos = 12; pos < b.length; ) {
    const size = dv.getUint32(pos + 4, true);
    out.push({ fourcc: String.fromCharCode(...b.subarray(pos, pos + 4)), data: b.subarray(pos + 8, pos + 8 + size) });
    pos += 8 + size + (size & 1);
  }
  return out;
}
