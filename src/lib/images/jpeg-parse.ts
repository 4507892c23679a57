/**
 * The marker structure of a JPEG (ITU T.81 B.2): DQT, DHT, DRI, SOF0/SOF1/SOF2 and every SOS with
 * the extent of its entropy-coded data, found without decoding it, so that decoders can make
 * several passes over the scans while holding only part of the coefficients.
 */
import { ImageStructureError, UnsupportedImageError } from "./exif";
import { buildDecodeTable, type HuffmanDecodeTable } from "./jpeg-bit-reader";

/** `ZIGZAG[k]` is the natural (row-major) index of the k-th coefficient in zig-zag order (T.81 figure A.6). */
export const ZIGZAG: Uint8Array = (() => {
  const out = new Uint8Array(64);
  let i = 0;
  for (let s = 0; s < 15; s++) {
    const lo = Math.max(0, s - 7);
    const hi = Math.min(s, 7);
    // Even diagonals run bottom-left to top-right, odd ones the other way.
    if (s % 2 === 0) for (let row = hi; row >= lo; row--) out[i++] = row * 8 + (s - row);
    else for (let row = lo; row <= hi; row++) out[i++] = row * 8 + (s - row);
  }
  return out;
})();

/** One colour component of the frame and the size of its block grid. */
export interface JpegComponent {
  /** Position in the frame header. */
  index: number;
  id: number;
  /** Sampling factors; forced to 1x1 for single-component images, whose MCU is one block (A.2.2). */
  h: number;
  v: number;
  /** Quantisation table selector. */
  tq: number;
  /** Blocks per row and rows of blocks: whole MCUs, so padding blocks are included. */
  blocksWide: number;
  blocksHigh: number;
  /** Blocks in the part of the component that carries image data (a non-interleaved scan's extent). */
  dataBlocksWide: number;
  dataBlocksHigh: number;
}

/** One scan: its header fields and where its entropy-coded data lies in the file. */
export interface JpegScan {
  components: JpegComponent[];
  dcTables: HuffmanDecodeTable[];
  acTables: HuffmanDecodeTable[];
  ss: number;
  se: number;
  ah: number;
  al: number;
  progressive: boolean;
  restartInterval: number;
  /** Offset of the first entropy-coded byte. */
  start: number;
}

/** Everything about a JPEG except its coefficients. */
export interface JpegLayout {
  width: number;
  height: number;
  hmax: number;
  vmax: number;
  mcusX: number;
  mcusY: number;
  progressive: boolean;
  components: JpegComponent[];
  /** Quantisation tables by selector, natural order. */
  quantTables: (Uint16Array | undefined)[];
  /** APPn and COM segments, marker included, in file order (views into the input). */
  segments: Uint8Array[];
  scans: JpegScan[];
}

/** Upper bound on coefficients in a frame, so a forged header cannot ask for gigabytes. */
const MAX_COEFFICIENTS = 1 << 27;

const fail = (why: string): never => {
  throw new ImageStructureError(`JPEG: ${why}`);
};
const unsupported = (why: string): never => {
  throw new UnsupportedImageError(`JPEG: ${why}`);
};

const u16 = (b: Uint8Array, o: number): number => (b[o]! << 8) | b[o + 1]!;

/** Reads the structure of a Huffman-coded 8-bit JPEG. Throws `ImageStructureError`. */
export function parseJpeg(bytes: Uint8Array): JpegLayout {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) fail("no SOI marker");
  const dcTables: (HuffmanDecodeTable | undefined)[] = [];
  const acTables: (HuffmanDecodeTable | undefined)[] = [];
  const quantTables: (Uint16Array | undefined)[] = [];
  const segments: Uint8Array[] = [];
  const scans: JpegScan[] = [];
  let frame: JpegLayout | undefined;
  let progressive = false;
  let restartInterval = 0;
  let pos = 2;
  for (;;) {
    if (pos + 1 >= bytes.length) fail("missing EOI marker (truncated file)");
    if (bytes[pos] !== 0xff) fail(`expected a marker at byte ${pos}`);
    let marker = bytes[pos + 1]!;
    pos += 2;
    // Any number of 0xFF fill bytes may precede a marker (B.1.1.2).
    while (marker === 0xff && pos < bytes.length) marker = bytes[pos++]!;
    if (marker === 0xd9) break;
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue; // stray RSTn / TEM: no length
    if (pos + 2 > bytes.length) fail("truncated segment");
    const length = u16(bytes, pos);
    if (length < 2 || pos + length > bytes.length) fail("truncated segment");
    const seg = bytes.subarray(pos + 2, pos + length);
    if (marker === 0xdb) readQuantTables(seg, quantTables);
    else if (marker === 0xc4) readHuffmanTables(seg, dcTables, acTables);
    else if (marker === 0xdd) restartInterval = seg.length >= 2 ? u16(seg, 0) : fail("bad DRI");
    else if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      if (frame) fail("more than one frame");
      progressive = marker === 0xc2;
      frame = readFrame(seg, progressive);
    } else if (marker === 0xc3 || marker === 0xc7 || marker === 0xcb || marker === 0xcf) {
      unsupported("lossless JPEG is not supported");
    } else if (marker === 0xc5 || marker === 0xc6 || marker === 0xde || marker === 0xdf) {
      unsupported("hierarchical JPEG is not supported");
    } else if (marker === 0xc9 || marker === 0xca || marker === 0xcc || marker === 0xcd || marker === 0xce) {
      unsupported("arithmetic coding is not supported");
    } else if (marker === 0xdc) unsupported("DNL (height defined after the scan) is not supported");
    else if (marker === 0xda) {
      if (!frame) fail("scan before frame header");
      const start = pos + length;
      scans.push(readScanHeader(seg, frame!, dcTables, acTables, progressive, restartInterval, start));
      pos = scanEnd(bytes, start);
      continue;
    } else if ((marker >= 0xe0 && marker <= 0xef) || marker === 0xfe) segments.push(bytes.subarray(pos - 2, pos + length));
    pos += length;
  }
  if (!frame || scans.length === 0) fail("no image data");
  for (const c of frame!.components) if (!quantTables[c.tq]) fail(`missing quantisation table ${c.tq}`);
  frame!.quantTables = quantTables;
  frame!.segments = segments;
  frame!.scans = scans;
  return frame!;
}

/** Offset of the marker that ends the entropy-coded data starting at `start` (RSTn markers belong to it). */
function scanEnd(data: Uint8Array, start: number): number {
  for (let p = data.indexOf(0xff, start); p >= 0 && p + 1 < data.length; p = data.indexOf(0xff, p + 1)) {
    const next = data[p + 1]!;
    if (next !== 0 && (next & 0xf8) !== 0xd0) return p;
  }
  return data.length;
}

function readQuantTables(seg: Uint8Array, out: (Uint16Array | undefined)[]): void {
  let p = 0;
  while (p < seg.length) {
    const pq = seg[p]! >> 4;
    const tq = seg[p]! & 15;
    p++;
    if (pq > 1 || tq > 3) fail("bad DQT");
    if (p + 64 * (pq + 1) > seg.length) fail("truncated DQT");
    const table = new Uint16Array(64);
    for (let k = 0; k < 64; k++) table[ZIGZAG[k]!] = pq ? u16(seg, p + 2 * k) : seg[p + k]!;
    if (table.includes(0)) fail("zero in a quantisation table");
    out[tq] = table;
    p += 64 * (pq + 1);
  }
}

function readHuffmanTables(seg: Uint8Array, dc: (HuffmanDecodeTable | undefined)[], ac: (HuffmanDecodeTable | undefined)[]): void {
  let p = 0;
  while (p < seg.length) {
    const tc = seg[p]! >> 4;
    const th = seg[p]! & 15;
    if (tc > 1 || th > 3 || p + 17 > seg.length) fail("bad DHT");
    const counts = seg.subarray(p + 1, p + 17);
    let n = 0;
    for (let i = 0; i < 16; i++) n += counts[i]!;
    if (n > 256 || p + 17 + n > seg.length) fail("bad DHT");
    const table = buildDecodeTable(counts, seg.subarray(p + 17, p + 17 + n));
    (tc === 0 ? dc : ac)[th] = table;
    p += 17 + n;
  }
}

function readFrame(seg: Uint8Array, progressive: boolean): JpegLayout {
  if (seg.length < 6) fail("bad SOF");
  if (seg[0] !== 8) unsupported(`${seg[0]}-bit precision is not supported`);
  const height = u16(seg, 1);
  const width = u16(seg, 3);
  const nf = seg[5]!;
  if (height === 0) unsupported("DNL (height defined after the scan) is not supported");
  if (width === 0) fail("zero width");
  if (nf < 1) fail("no components");
  if (nf > 4) unsupported(`${nf} components are not supported`);
  if (seg.length < 6 + 3 * nf) fail("truncated SOF");
  const raw: { id: number; h: number; v: number; tq: number }[] = [];
  for (let i = 0; i < nf; i++) {
    const o = 6 + 3 * i;
    const h = nf === 1 ? 1 : seg[o + 1]! >> 4;
    const v = nf === 1 ? 1 : seg[o + 1]! & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4 || seg[o + 2]! > 3) fail("bad component in SOF");
    raw.push({ id: seg[o]!, h, v, tq: seg[o + 2]! });
  }
  const hmax = Math.max(...raw.map((c) => c.h));
  const vmax = Math.max(...raw.map((c) => c.v));
  const mcusX = Math.ceil(width / (8 * hmax));
  const mcusY = Math.ceil(height / (8 * vmax));
  let total = 0;
  for (const c of raw) total += mcusX * c.h * mcusY * c.v * 64;
  if (total > MAX_COEFFICIENTS) fail(`${width}x${height} is too large to transform`);
  const components = raw.map(
    (c, index): JpegComponent => ({
      index,
      ...c,
      blocksWide: mcusX * c.h,
      blocksHigh: mcusY * c.v,
      dataBlocksWide: Math.ceil(Math.ceil((width * c.h) / hmax) / 8),
      dataBlocksHigh: Math.ceil(Math.ceil((height * c.v) / vmax) / 8),
    }),
  );
  return { width, height, hmax, vmax, mcusX, mcusY, progressive, components, quantTables: [], segments: [], scans: [] };
}

function readScanHeader(
  seg: Uint8Array,
  frame: JpegLayout,
  dc: (HuffmanDecodeTable | undefined)[],
  ac: (HuffmanDecodeTable | undefined)[],
  progressive: boolean,
  restartInterval: number,
  start: number,
): JpegScan {
  const ns = seg[0] ?? 0;
  if (ns < 1 || ns > 4 || seg.length < 4 + 2 * ns) fail("bad SOS");
  const ss = seg[1 + 2 * ns]!;
  const se = seg[2 + 2 * ns]!;
  const ah = seg[3 + 2 * ns]! >> 4;
  const al = seg[3 + 2 * ns]! & 15;
  if (progressive) {
    const valid = ss <= se && se <= 63 && (ss === 0 ? se === 0 : ns === 1) && al <= 13 && ah <= 13;
    if (!valid) fail("bad progressive scan parameters");
  } else if (ss !== 0 || se !== 63 || ah !== 0 || al !== 0) fail("bad sequential scan parameters");
  const scan: JpegScan = { components: [], dcTables: [], acTables: [], ss, se, ah, al, progressive, restartInterval, start };
  let blocksPerMcu = 0;
  for (let i = 0; i < ns; i++) {
    const comp = frame.components.find((c) => c.id === seg[1 + 2 * i]);
    if (!comp) fail("scan names an unknown component");
    const td = seg[2 + 2 * i]! >> 4;
    const ta = seg[2 + 2 * i]! & 15;
    // Tables are only looked up when the scan needs them: refinement scans use none for DC.
    const needsDc = ss === 0 && ah === 0;
    const needsAc = se > 0;
    const dcTable = dc[td];
    const acTable = ac[ta];
    if ((needsDc && !dcTable) || (needsAc && !acTable)) fail("scan uses an undefined Huffman table");
    scan.components.push(comp!);
    scan.dcTables.push(dcTable!);
    scan.acTables.push(acTable!);
    blocksPerMcu += comp!.h * comp!.v;
  }
  if (ns > 1 && blocksPerMcu > 10) fail("more than 10 blocks per MCU");
  return scan;
}
