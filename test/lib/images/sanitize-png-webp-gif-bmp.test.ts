import { describe, expect, it } from "vitest";
import { filterExif } from "../../../src/lib/images/exif";
import { ImageStructureError, sanitizeImage } from "../../../src/lib/images/sanitize";
import {
  bmpImage,
  buildTiff,
  concat,
  encodeJpeg,
  GIF_PLANTED,
  gifWithMetadata,
  inflate,
  PLANTED,
  pngChunk,
  pngImage,
  pngRaw,
  pngWithMetadata,
  riff,
  riffChunk,
  SECRETS,
  simpleWebp,
  T,
  testPixel,
  vp8lBitstream,
  WEBP_PLANTED,
  webpWithMetadata,
} from "../../support/image-fixtures";
import { contains, pngChunks, riffChunks } from "../../support/image-fixtures-inspect";

const text = (s: string) => new TextEncoder().encode(s);
const ZIP = concat([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 0, 0], text("evil.html"), new Uint8Array(40));
const HTML = text("<html><script>alert(1)</script></html>");
const throws = (bytes: Uint8Array, format: Parameters<typeof sanitizeImage>[1]) =>
  expect(() => sanitizeImage(bytes, format)).toThrow(ImageStructureError);

function crc(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe("sanitizeImage: PNG", () => {
  for (const littleEndian of [false, true]) {
    it(`drops text, time, private chunks and filters eXIf (${littleEndian ? "II" : "MM"})`, async () => {
      const out = sanitizeImage(await pngWithMetadata(littleEndian), "png");
      const chunks = pngChunks(out.bytes);
      expect(chunks.map((c) => c.type)).toEqual(["IHDR", "gAMA", "sRGB", "pHYs", "eXIf", "IDAT", "IDAT", "IEND"]);
      for (const needle of ["tEXt", "zTXt", "iTXt", "tIME", "prVt", "http://ns.adobe.com", PLANTED.pngText, ...Object.values(SECRETS)]) {
        expect(contains(out.bytes, needle), needle).toBe(false);
      }
      for (const c of chunks) expect(crc(concat(text(c.type), c.data))).toBe(c.crc);
      const exif = filterExif(chunks.find((c) => c.type === "eXIf")!.data);
      expect(exif.orientation).toBe(1);
      expect(exif.metadata).toMatchObject({ Make: "Acme Cameras", FNumber: 2.8, ISO: 400 });
      expect(String.fromCharCode(chunks.find((c) => c.type === "eXIf")!.data[0]!)).toBe(littleEndian ? "I" : "M");
      expect(out).toMatchObject({ format: "png", width: 16, height: 8, orientation: 6 });
      expect(out.metadata.Model).toBe("Acme X100");
    });
  }

  it("still decodes to the same scanlines", async () => {
    const out = sanitizeImage(await pngWithMetadata(), "png");
    const idat = concat(
      ...pngChunks(out.bytes)
        .filter((c) => c.type === "IDAT")
        .map((c) => c.data),
    );
    expect(await inflate(idat)).toEqual(pngRaw());
  });

  it("drops eXIf entirely when nothing allowed is left, and returns a clean PNG as is", async () => {
    const onlyGps = buildTiff(
      {
        entries: [
          { tag: 0x0112, type: T.SHORT, values: [3] },
          { tag: 0x8825, ifd: { entries: [] } },
        ],
      },
      false,
    );
    const out = sanitizeImage(await pngImage([pngChunk("eXIf", onlyGps)]), "png");
    expect(pngChunks(out.bytes).map((c) => c.type)).not.toContain("eXIf");
    expect(out.orientation).toBe(3);
    const clean = await pngImage();
    expect(sanitizeImage(clean, "png").bytes).toBe(clean);
  });

  it("refuses polyglots, truncation, bad CRCs and broken structure", async () => {
    const png = await pngImage();
    throws(concat(png, ZIP), "png");
    throws(concat(png, HTML), "png");
    throws(png.subarray(0, png.length - 1), "png");
    throws(png.subarray(0, 40), "png");
    const badCrc = png.slice();
    badCrc[40]! ^= 0xff; // inside the first IDAT
    throws(badCrc, "png");
    const ihdrLater = concat(png.subarray(0, 8), pngChunk("gAMA", [0, 0, 0xb1, 0x8f]), png.subarray(8));
    throws(ihdrLater, "png");
    throws(await pngImage([pngChunk("QQQQ", [1])]), "png"); // unknown critical chunk
    const hugeLength = png.slice();
    new DataView(hugeLength.buffer).setUint32(33, 0xfffffff0);
    throws(hugeLength, "png");
    throws(encodeJpeg(8, 8, testPixel), "png");
  });
});

describe("sanitizeImage: WebP", () => {
  it("drops XMP and unknown chunks, filters EXIF, fixes VP8X flags and the RIFF size", () => {
    const input = webpWithMetadata(true);
    const out = sanitizeImage(input, "webp");
    const chunks = riffChunks(out.bytes);
    expect(chunks.map((c) => c.fourcc)).toEqual(["VP8X", "VP8L", "EXIF"]);
    expect(new DataView(out.bytes.buffer, out.bytes.byteOffset).getUint32(4, true)).toBe(out.bytes.length - 8);
    expect(chunks[0]!.data[0]).toBe(0x08); // EXIF set, XMP cleared
    expect(chunks[1]!.data).toEqual(vp8lBitstream());
    for (const needle of [WEBP_PLANTED.xmp, "XMP ", "ZZZZ", ...Object.values(SECRETS)]) expect(contains(out.bytes, needle)).toBe(false);
    const exif = filterExif(chunks[2]!.data);
    expect(exif).toMatchObject({ orientation: 1, metadata: { Make: "Acme Cameras", ExposureTime: 0.008 } });
    expect(out).toMatchObject({ format: "webp", width: 4, height: 2, orientation: 6 });
  });

  it("clears the EXIF flag when nothing allowed remains, and pads odd chunks", () => {
    const exif = buildTiff(
      {
        entries: [
          { tag: 0x0112, type: T.SHORT, values: [8] },
          { tag: 0x0131, type: T.ASCII, text: "x" },
        ],
      },
      true,
    );
    const input = riff([
      riffChunk("VP8X", Uint8Array.from([0x0c, 0, 0, 0, 3, 0, 0, 1, 0, 0])),
      riffChunk("ICCP", text("odd")),
      riffChunk("VP8L", vp8lBitstream()),
      riffChunk("EXIF", exif),
    ]);
    const out = sanitizeImage(input, "webp");
    expect(riffChunks(out.bytes).map((c) => c.fourcc)).toEqual(["VP8X", "ICCP", "VP8L"]);
    expect(out.bytes[20]).toBe(0x00);
    expect(out.bytes.length % 2).toBe(0);
    expect(out.orientation).toBe(8);
  });

  it("keeps a simple-format file as it is", () => {
    const input = simpleWebp();
    expect(sanitizeImage(input, "webp")).toMatchObject({ bytes: input, width: 4, height: 2 });
  });

  it("refuses data beyond the RIFF size, truncation and broken chunks", () => {
    const webp = webpWithMetadata();
    throws(concat(webp, ZIP), "webp");
    throws(webp.subarray(0, webp.length - 3), "webp");
    const shortRiff = webp.slice();
    new DataView(shortRiff.buffer).setUint32(4, webp.length, true); // claims more than there is
    throws(shortRiff, "webp");
    throws(riff([riffChunk("XMP ", text("only metadata"))]), "webp");
    const overlong = webp.slice();
    new DataView(overlong.buffer).setUint32(16, 0xfffffff0, true); // VP8X size
    throws(overlong, "webp");
  });
});

describe("sanitizeImage: GIF", () => {
  it("drops comments and XMP, keeps looping, frame control and image data", () => {
    const input = gifWithMetadata();
    const out = sanitizeImage(input, "gif");
    for (const needle of [GIF_PLANTED.comment, GIF_PLANTED.xmp, "XMP DataXMP", "ns.adobe.com"])
      expect(contains(out.bytes, needle)).toBe(false);
    expect(contains(out.bytes, "NETSCAPE2.0")).toBe(true);
    expect(contains(out.bytes, [0x21, 0xf9, 4])).toBe(true);
    const image = input.subarray(input.indexOf(0x2c, 40)); // descriptor, LZW data and trailer
    expect(out.bytes.subarray(out.bytes.length - image.length)).toEqual(image);
    expect(out).toMatchObject({ format: "gif", width: 4, height: 2, orientation: 1, metadata: {} });
  });

  it("refuses data after the trailer, truncation and unknown blocks", () => {
    const gif = gifWithMetadata();
    throws(concat(gif, HTML), "gif");
    throws(gif.subarray(0, gif.length - 1), "gif");
    throws(gif.subarray(0, 30), "gif");
    throws(concat(gif.subarray(0, 25), [0x99], gif.subarray(25)), "gif");
    throws(concat(gif.subarray(0, 25), [0x3b]), "gif"); // trailer without an image
  });
});

describe("sanitizeImage: BMP", () => {
  it("returns a valid BMP unchanged", () => {
    for (const topDown of [false, true]) {
      const bmp = bmpImage(topDown);
      expect(sanitizeImage(bmp, "bmp")).toEqual({ bytes: bmp, format: "bmp", width: 4, height: 2, orientation: 1, metadata: {} });
    }
  });

  it("refuses data past bfSize, truncation and bad headers", () => {
    const bmp = bmpImage();
    throws(concat(bmp, ZIP), "bmp");
    throws(bmp.subarray(0, bmp.length - 1), "bmp");
    const patch = (at: number, value: number, size: 2 | 4) => {
      const b = bmp.slice();
      const dv = new DataView(b.buffer);
      if (size === 2) dv.setUint16(at, value, true);
      else dv.setUint32(at, value, true);
      return b;
    };
    throws(patch(2, 10, 4), "bmp"); // bfSize smaller than the file: trailing data
    throws(patch(14, 99, 4), "bmp"); // unknown info header size
    throws(patch(10, 5000, 4), "bmp"); // pixel offset past the end
    throws(patch(28, 7, 2), "bmp"); // bit count
    throws(patch(22, 100, 4), "bmp"); // more rows than the pixel data holds
  });
});
