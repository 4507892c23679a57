/**
 * JPEG (ITU T.81) decoding down to quantised DCT coefficients, without the inverse DCT: every
 * scan of the sequential and progressive processes (F.2, G.2) decoded into whole-frame arrays.
 * Memory grows with the picture (two bytes per coefficient), so the service never uses it (its
 * decoders hold a band: src/lib/images/jpeg-band-decode.ts); the tests use it as the reference.
 */
import { type JpegComponent, parseJpeg } from "../../src/lib/images/jpeg-parse";
import { createScanDecoder } from "../../src/lib/images/jpeg-scan-decode";

export { ZIGZAG } from "../../src/lib/images/jpeg-parse";

/** One colour component and its coefficients. */
export interface FrameComponent extends JpegComponent {
  /** 64 coefficients per block in natural order, blocks row by row. */
  coeffs: Int16Array;
}

/** A decoded JPEG: its frame and the quantised coefficients of every component. */
export interface JpegCoefficients {
  width: number;
  height: number;
  hmax: number;
  vmax: number;
  mcusX: number;
  mcusY: number;
  components: FrameComponent[];
  /** Quantisation tables by selector, natural order. */
  quantTables: (Uint16Array | undefined)[];
  /** APPn and COM segments, marker included, in file order (views into the input). */
  segments: Uint8Array[];
}

/** Decodes every scan of a Huffman-coded 8-bit JPEG into coefficients. Throws `ImageStructureError`. */
export function decodeJpegCoefficients(bytes: Uint8Array): JpegCoefficients {
  const layout = parseJpeg(bytes);
  const components = layout.components.map((c): FrameComponent => ({ ...c, coeffs: new Int16Array(c.blocksWide * c.blocksHigh * 64) }));
  for (const scan of layout.scans) {
    const d = createScanDecoder(bytes, scan, layout.mcusX, layout.mcusY);
    scan.components.forEach((c, i) => {
      d.regions[i] = { coeffs: components[c.index]!.coeffs, x0: 0, y0: 0, w: c.blocksWide, h: c.blocksHigh };
    });
    for (let row = 0; row < d.unitsY; row++) d.decodeUnits(row, 0, d.unitsX);
  }
  const { width, height, hmax, vmax, mcusX, mcusY, quantTables, segments } = layout;
  return { width, height, hmax, vmax, mcusX, mcusY, components, quantTables, segments };
}
