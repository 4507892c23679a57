import { describe, expect, it } from "vitest";
import { encodeBaselineJpeg, IDENTITY_ORDER, IDENTITY_SIGN } from "../../../src/lib/images/jpeg-encode";
import { orientJpeg } from "../../../src/lib/images/jpeg-orient";
import { decodeJpegCoefficients, ZIGZAG } from "../../support/jpeg-coefficients";

// In the slow tier (npm run test:slow, CI): one camera-size rotation is some 17 s of CPU, and
// jpeg-orient.test.ts covers every orientation, sampling and band size on small files.
describe("orientJpeg at camera size", () => {
  it("rotates a 24-megapixel 4:2:0 JPEG (6000x4000) by 90 degrees", () => {
    // Synthetic coefficients stand in for a photo (no pixel encoder is available in workerd):
    // random low- and mid-frequency content gives a file of realistic size (~10 MB).
    const W = 6000;
    const H = 4000;
    let seed = 7;
    const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) / 16777216;
    const make = (id: number, h: number, v: number, tq: number, bw: number, bh: number) => {
      const coeffs = new Int16Array(bw * bh * 64);
      for (let b = 0; b < bw * bh; b++) {
        coeffs[b * 64] = Math.round(Math.sin(b / 5000) * 60);
        for (let k = 1; k < 36; k++) if (rand() < 0.75) coeffs[b * 64 + ZIGZAG[k]!] = Math.round((rand() - 0.5) * (48 - k));
      }
      return { id, h, v, tq, coeffs, blockOffset: (x: number, y: number) => (y * bw + x) * 64 };
    };
    const q = (base: number) => Uint16Array.from({ length: 64 }, (_, i) => base + (i >> 3) + (i & 7));
    let input: Uint8Array | undefined = encodeBaselineJpeg({
      width: W,
      height: H,
      components: [make(1, 2, 2, 0, 750, 500), make(2, 1, 1, 1, 375, 250), make(3, 1, 1, 1, 375, 250)],
      quantTables: [q(2), q(4)],
      order: IDENTITY_ORDER,
      sign: IDENTITY_SIGN,
      segments: [],
    });
    const inputLength = input.length;
    const reference = decodeJpegCoefficients(input);
    const t0 = performance.now();
    const out = orientJpeg(input, 6);
    const ms = performance.now() - t0;
    input = undefined;
    expect([out.width, out.height]).toEqual([4000, 6000]);
    const got = decodeJpegCoefficients(out.bytes);
    expect([got.width, got.height, got.components[0]!.h, got.components[0]!.v]).toEqual([4000, 6000, 2, 2]);
    // Rotating 90 degrees clockwise: output block (x, y) is source block (y, rows-1-x), transposed,
    // with odd output-horizontal frequencies negated.
    for (let n = 0; n < 300; n++) {
      const c = Math.floor(rand() * 3);
      const s = reference.components[c]!;
      const g = got.components[c]!;
      const ox = Math.floor(rand() * g.dataBlocksWide);
      const oy = Math.floor(rand() * g.dataBlocksHigh);
      const so = (oy + (s.dataBlocksHigh - 1 - ox) * s.blocksWide) * 64;
      const go = (oy * g.blocksWide + ox) * 64;
      for (let v = 0; v < 8; v++) {
        for (let u = 0; u < 8; u++) expect(g.coeffs[go + v * 8 + u]).toBe(s.coeffs[so + u * 8 + v]! * (u & 1 ? -1 : 1) || 0);
      }
    }
    console.log(
      `24 MP rotate: input ${(inputLength / 1e6).toFixed(1)} MB, output ${(out.bytes.length / 1e6).toFixed(1)} MB, ` +
        `coefficients ${((reference.components.reduce((a, c) => a + c.coeffs.length, 0) * 2) / 1e6).toFixed(1)} MB, ` +
        `${Math.round(ms)} ms (workerd clock)`,
    );
  }, 180_000);
});
