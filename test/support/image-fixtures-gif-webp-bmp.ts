/** Hand-written GIF89a, VP8L WebP and BMP fixtures: 4x2 pictures in eight distinct colours. */
import { cameraExif } from "./image-fixtures-tiff";

const text = (s: string) => new TextEncoder().encode(s);
const bytes = (...parts: (Uint8Array | number[])[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

/** The 4x2 picture: red, green, blue, white / black, yellow, cyan, magenta. */
export const SMALL_PIXELS: readonly (readonly [number, number, number])[] = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 255],
  [0, 0, 0],
  [255, 255, 0],
  [0, 255, 255],
  [255, 0, 255],
];

export const GIF_PLANTED = { comment: "GIF-COMMENT-SECRET", xmp: "http://ns.adobe.com/xap/1.0/ GIF-XMP-SECRET" } as const;

const subBlocks = (data: Uint8Array) => {
  const out: number[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const part = data.subarray(i, i + 255);
    out.push(part.length, ...part);
  }
  return [...out, 0];
};

/**
 * LZW data (GIF89a appendix F) for 2-bit indices: a clear code before every second literal keeps
 * the code width at 3 bits, so no dictionary bookkeeping is needed.
 */
function lzw(indices: number[]): Uint8Array {
  const codes: number[] = [];
  indices.forEach((v, i) => {
    if (i % 2 === 0) codes.push(4);
    codes.push(v);
  });
  codes.push(5);
  const out: number[] = [];
  let acc = 0;
  let n = 0;
  for (const c of codes) {
    acc |= c << n;
    n += 3;
    while (n >= 8) {
      out.push(acc & 0xff);
      acc >>= 8;
      n -= 8;
    }
  }
  if (n > 0) out.push(acc & 0xff);
  return Uint8Array.from(out);
}

/** A 4x2 GIF89a (4-colour table) with NETSCAPE looping, a comment and an XMP application extension. */
export function gifWithMetadata(): Uint8Array {
  const palette = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255];
  const indices = [0, 1, 2, 3, 3, 2, 1, 0];
  return bytes(
    text("GIF89a"),
    [4, 0, 2, 0, 0x81, 0, 0],
    palette,
    [0x21, 0xff, 11],
    text("NETSCAPE2.0"),
    [3, 1, 0, 0, 0],
    [0x21, 0xfe],
    subBlocks(text(GIF_PLANTED.comment)),
    [0x21, 0xff, 11],
    text("XMP DataXMP"),
    subBlocks(text(GIF_PLANTED.xmp)),
    [0x21, 0xf9, 4, 0, 10, 0, 0, 0],
    [0x2c, 0, 0, 0, 0, 4, 0, 2, 0, 0],
    [2],
    subBlocks(lzw(indices)),
    [0x3b],
  );
}

/** LSB-first bit writer, as VP8L reads its stream. */
class LsbBits {
  out: number[] = [];
  private acc = 0;
  private n = 0;
  write(value: number, length: number) {
    for (let i = 0; i < length; i++) {
      this.acc |= ((value >> i) & 1) << this.n;
      if (++this.n === 8) {
        this.out.push(this.acc);
        this.acc = 0;
        this.n = 0;
      }
    }
  }
  finish() {
    if (this.n) this.out.push(this.acc);
    return Uint8Array.from(this.out);
  }
}

/**
 * The VP8L bitstream of the 4x2 picture (WebP lossless spec): no transform, no colour cache, no
 * meta codes, and five "simple" prefix codes: green, red and blue each use two symbols (0 and
 * 255, one bit per pixel), alpha and distance one symbol (zero bits).
 */
export function vp8lBitstream(): Uint8Array {
  const w = new LsbBits();
  w.write(0x2f, 8);
  w.write(4 - 1, 14);
  w.write(2 - 1, 14);
  w.write(0, 1); // alpha_is_used
  w.write(0, 3); // version
  w.write(0, 1); // no transform
  w.write(0, 1); // no colour cache
  w.write(0, 1); // no meta prefix codes
  const twoSymbols = () => (w.write(1, 1), w.write(1, 1), w.write(0, 1), w.write(0, 1), w.write(255, 8));
  twoSymbols(); // green
  twoSymbols(); // red
  twoSymbols(); // blue
  w.write(1, 1), w.write(0, 1), w.write(1, 1), w.write(255, 8); // alpha: 255 only
  w.write(1, 1), w.write(0, 1), w.write(0, 1), w.write(0, 1); // distance: 0 only
  for (const [r, g, b] of SMALL_PIXELS) {
    w.write(g ? 1 : 0, 1);
    w.write(r ? 1 : 0, 1);
    w.write(b ? 1 : 0, 1);
  }
  return w.finish();
}

export function riffChunk(fourcc: string, data: Uint8Array): Uint8Array {
  const size = data.length;
  return bytes(text(fourcc), [size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, size >>> 24], data, size & 1 ? [0] : []);
}

export function riff(chunks: Uint8Array[]): Uint8Array {
  const body = bytes(text("WEBP"), ...chunks);
  const size = body.length;
  return bytes(text("RIFF"), [size & 0xff, (size >> 8) & 0xff, (size >> 16) & 0xff, size >>> 24], body);
}

export const WEBP_PLANTED = { xmp: "http://ns.adobe.com/xap/1.0/ WEBP-XMP-SECRET" } as const;

/** VP8X (EXIF and XMP flags set) + VP8L + EXIF + XMP + an unknown chunk (odd length, padded). */
export function webpWithMetadata(littleEndian = true): Uint8Array {
  const vp8x = [0x08 | 0x04, 0, 0, 0, 3, 0, 0, 1, 0, 0];
  return riff([
    riffChunk("VP8X", Uint8Array.from(vp8x)),
    riffChunk("VP8L", vp8lBitstream()),
    riffChunk("EXIF", cameraExif(littleEndian)),
    riffChunk("XMP ", text(WEBP_PLANTED.xmp)),
    riffChunk("ZZZZ", text("odd")),
  ]);
}

/** A simple-format (no VP8X) lossless WebP. */
export const simpleWebp = () => riff([riffChunk("VP8L", vp8lBitstream())]);

/** A 24-bit 4x2 BMP with a BITMAPINFOHEADER; bottom-up unless `topDown`. */
export function bmpImage(topDown = false): Uint8Array {
  const rows: number[] = [];
  for (let y = 0; y < 2; y++) {
    const src = topDown ? y : 1 - y;
    for (let x = 0; x < 4; x++) {
      const [r, g, b] = SMALL_PIXELS[src * 4 + x]!;
      rows.push(b, g, r);
    }
  }
  const size = 54 + rows.length;
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set(text("BM"));
  dv.setUint32(2, size, true);
  dv.setUint32(10, 54, true);
  dv.setUint32(14, 40, true);
  dv.setInt32(18, 4, true);
  dv.setInt32(22, topDown ? -2 : 2, true);
  dv.setUint16(26, 1, true);
  dv.setUint16(28, 24, true);
  dv.setUint32(34, rows.length, true);
  out.set(rows, 54);
  return out;
}
