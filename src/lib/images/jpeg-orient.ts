/**
 * Lossless re-orientation of a JPEG in the DCT domain, as `jpegtran -rotate/-flip/-transpose -trim`
 * does: the coefficients are never turned into pixels, so a 24-megapixel photo fits in a Worker.
 * Blocks are moved while the output is encoded (no second coefficient copy); inside a block a
 * transpose swaps the frequencies and a mirror negates the odd frequencies along its axis, since
 * cos((2(7-x)+1)u*pi/16) = (-1)^u cos((2x+1)u*pi/16).
 * Large pictures go band by band: the source MCU columns (when transposed) or rows that become the
 * next output MCU rows are decoded, counted for the Huffman tables, and decoded again to be written.
 */
import { ImageStructureError } from "./exif";
import { bandCuts, createBandDecoder } from "./jpeg-band-decode";
import { BaselineEncoder, type BlockSource } from "./jpeg-encode";
import { parseJpeg, ZIGZAG } from "./jpeg-parse";
import type { BlockRegion } from "./jpeg-scan-decode";

export { ImageStructureError };

/** EXIF orientation values: 1 upright, 2 mirrored horizontally, 3 rotated 180, 4 mirrored vertically, 5 transposed, 6 rotated 90 CW needed, 7 transverse, 8 rotated 270 CW needed (the standard EXIF meanings; apply the transform that makes the image upright). */
export type Orientation = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/**
 * How output pixel (x', y') is found in the source: transpose first (x = y', y = x'), then mirror
 * the source axes flagged (x -> W-1-x, y -> H-1-y).
 */
interface Mapping {
  transpose: boolean;
  mirrorX: boolean;
  mirrorY: boolean;
}

const MAPPINGS: Record<Orientation, Mapping> = {
  1: { transpose: false, mirrorX: false, mirrorY: false },
  2: { transpose: false, mirrorX: true, mirrorY: false }, // flip horizontally
  3: { transpose: false, mirrorX: true, mirrorY: true }, // rotate 180
  4: { transpose: false, mirrorX: false, mirrorY: true }, // flip vertically
  5: { transpose: true, mirrorX: false, mirrorY: false }, // transpose
  6: { transpose: true, mirrorX: false, mirrorY: true }, // rotate 90 clockwise
  7: { transpose: true, mirrorX: true, mirrorY: true }, // transverse
  8: { transpose: true, mirrorX: true, mirrorY: false }, // rotate 270 clockwise
};

/** For each output zig-zag position: the natural index to read in the source block, and its sign. */
function blockTransform(m: Mapping): { order: Uint8Array; sign: Int8Array } {
  const order = new Uint8Array(64);
  const sign = new Int8Array(64);
  for (let k = 0; k < 64; k++) {
    const n = ZIGZAG[k]!;
    // Output vertical frequency v', horizontal u'; the source frequencies swap when transposed.
    const v = m.transpose ? n & 7 : n >> 3;
    const u = m.transpose ? n >> 3 : n & 7;
    order[k] = v * 8 + u;
    sign[k] = (m.mirrorX && u & 1 ? -1 : 1) * (m.mirrorY && v & 1 ? -1 : 1);
  }
  return { order, sign };
}

function transposeTable(q: Uint16Array): Uint16Array {
  const t = new Uint16Array(64);
  for (let i = 0; i < 64; i++) t[(i & 7) * 8 + (i >> 3)] = q[i]!;
  return t;
}

/** Coefficient bytes decoded at once; a picture with more is re-oriented band by band. */
export const ORIENT_BAND_BYTES = 16 << 20;

/**
 * The JPEG made upright, losslessly: a baseline JPEG whose pixels are the input's rotated/flipped per `orientation`.
 * Edge blocks that do not fill a whole MCU along an edge that moves to the top/left are trimmed (as jpegtran -trim), so the result may be up to 15 px smaller in a dimension; `width`/`height` are the result's.
 * Segments other than the image data (APP0 JFIF, APP1 Exif, APP2 ICC, APP14 Adobe) are copied in their original order before the new frame; the caller has already filtered them.
 * Throws `ImageStructureError` (from "./exif") on anything it cannot decode: arithmetic coding, lossless/hierarchical JPEG, 12-bit precision, more than 4 components, broken Huffman data, a progressive file with too many scans to index within the memory bound.
 * Orientation 1 is transcoded too (progressive or restart-coded input becomes plain baseline).
 * Huffman tables are optimised for the image (T.81 K.2), from a counting pass.
 * Holds about `ORIENT_BAND_BYTES` of coefficients at once besides the input and the output.
 */
export function orientJpeg(bytes: Uint8Array, orientation: Orientation): { bytes: Uint8Array; width: number; height: number } {
  return orientJpegInBands(bytes, orientation, ORIENT_BAND_BYTES);
}

/** `orientJpeg` decoding at most about `bandBytes` of coefficients at once; the output does not depend on it. */
export function orientJpegInBands(
  bytes: Uint8Array,
  orientation: Orientation,
  bandBytes: number,
): { bytes: Uint8Array; width: number; height: number } {
  const m = MAPPINGS[orientation];
  if (!m) throw new ImageStructureError(`JPEG: unknown orientation ${String(orientation)}`);
  const src = parseJpeg(bytes);
  const mcuW = 8 * src.hmax;
  const mcuH = 8 * src.vmax;
  // A mirrored axis brings the partial MCU at its far end to the front, where it cannot be
  // placed losslessly: drop it (jpegtran -trim).
  const width = m.mirrorX ? Math.floor(src.width / mcuW) * mcuW : src.width;
  const height = m.mirrorY ? Math.floor(src.height / mcuH) * mcuH : src.height;
  if (width === 0 || height === 0) {
    throw new ImageStructureError(`JPEG: ${src.width}x${src.height} is smaller than one MCU and cannot be flipped losslessly`);
  }
  const { order, sign } = blockTransform(m);
  const outWidth = m.transpose ? height : width;
  const outHeight = m.transpose ? width : height;
  const encoder = new BaselineEncoder({
    width: outWidth,
    height: outHeight,
    components: src.components.map((c) => ({ id: c.id, h: m.transpose ? c.v : c.h, v: m.transpose ? c.h : c.v, tq: c.tq })),
    quantTables: m.transpose ? src.quantTables.map((q) => q && transposeTable(q)) : src.quantTables,
    order,
    sign,
    segments: src.segments,
  });

  const sources = (regions: BlockRegion[]): BlockSource[] =>
    src.components.map((c): BlockSource => {
      // Whole MCUs kept along a mirrored axis, in this component's blocks.
      const keptX = (width / mcuW) * c.h;
      const keptY = (height / mcuH) * c.v;
      const maxX = c.blocksWide - 1;
      const maxY = c.blocksHigh - 1;
      const g = regions[c.index]!;
      return {
        coeffs: g.coeffs,
        blockOffset(bx, by) {
          let sx = m.transpose ? by : bx;
          let sy = m.transpose ? bx : by;
          if (m.mirrorX) sx = keptX - 1 - sx;
          if (m.mirrorY) sy = keptY - 1 - sy;
          // Output padding blocks past the source's whole MCUs repeat the edge block.
          sx = sx < 0 ? 0 : sx > maxX ? maxX : sx;
          sy = sy < 0 ? 0 : sy > maxY ? maxY : sy;
          return ((sy - g.y0) * g.w + sx - g.x0) * 64;
        },
      };
    });

  // Output MCU rows come from source MCU columns when transposed, else from source MCU rows.
  const axis = m.transpose ? "x" : "y";
  const srcMcus = m.transpose ? src.mcusX : src.mcusY;
  const mirrored = m.transpose ? m.mirrorX : m.mirrorY;
  const kept = m.transpose ? width / mcuW : height / mcuH;
  let coefficientBytes = 0;
  for (const c of src.components) coefficientBytes += c.blocksWide * c.blocksHigh * 128;
  const cuts = bandCuts(srcMcus, Math.ceil(coefficientBytes / bandBytes));
  const decoder = createBandDecoder(bytes, src, axis, cuts);
  // Each source band as output MCU rows, in output order; bands trimmed away entirely are left out.
  const plan: { band: number; r0: number; r1: number }[] = [];
  for (let b = 0; b < decoder.bands; b++) {
    const [r0, r1] = mirrored ? [Math.max(kept - cuts[b + 1]!, 0), kept - cuts[b]!] : [cuts[b]!, Math.min(cuts[b + 1]!, encoder.mcusY)];
    if (r0 < r1) plan.push({ band: b, r0, r1 });
  }
  plan.sort((a, b) => a.r0 - b.r0);
  if (plan.length === 1) {
    const one = sources(decoder.decodeBand(plan[0]!.band));
    encoder.count(one, 0, encoder.mcusY);
    encoder.start();
    encoder.write(one, 0, encoder.mcusY);
  } else {
    for (const p of plan) encoder.count(sources(decoder.decodeBand(p.band)), p.r0, p.r1);
    encoder.start();
    for (const p of plan) encoder.write(sources(decoder.decodeBand(p.band)), p.r0, p.r1);
  }
  return { bytes: encoder.finish(), width: outWidth, height: outHeight };
}
