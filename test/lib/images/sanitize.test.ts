import { describe, expect, it } from "vitest";
import { filterExif } from "../../../src/lib/images/exif";
import { ImageStructureError, sanitizeImage } from "../../../src/lib/images/sanitize";
import {
  concat,
  encodeJpeg,
  insertAfterJfif,
  jpegMetadataSegments,
  jpegWithMetadata,
  largeJpeg,
  PLANTED,
  SECRETS,
  testPixel,
} from "../../support/image-fixtures";
import { contains, decodingStream, indexOfBytes, jpegExifTiff, jpegSegments, tiffTags } from "../../support/image-fixtures-inspect";

const text = (s: string) => new TextEncoder().encode(s);
const seg = (marker: number, payload: Uint8Array) =>
  concat([0xff, marker, (payload.length + 2) >> 8, (payload.length + 2) & 0xff], payload);
const ZIP = concat([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 0, 0], text("evil.html"), new Uint8Array(40));
const HTML = text("<html><script>alert(document.cookie)</script></html>");

const KEPT = {
  Make: "Acme Cameras",
  Model: "Acme X100",
  LensMake: "LensCo",
  LensModel: "LensCo 24-70mm F2.8",
  ExposureTime: 0.008,
  FNumber: 2.8,
  ExposureProgram: 2,
  ISO: 400,
  FocalLength: 4.5,
  FocalLengthIn35mmFilm: 26,
  WhiteBalance: 1,
  DateTimeOriginal: "2024:05:06 07:08:09",
};

describe("sanitizeImage: JPEG", () => {
  const variants = [
    ["baseline, little-endian EXIF", true, {}],
    ["baseline, big-endian EXIF", false, { quality: 50 }],
    ["baseline with restart markers", true, { restartInterval: 1 }],
    ["progressive (DHT between scans)", false, { progressive: true }],
  ] as const;

  for (const [name, littleEndian, options] of variants) {
    describe(name, () => {
      const input = jpegWithMetadata(littleEndian, options, 6);
      const out = sanitizeImage(input, "jpeg");

      it("removes XMP, extended XMP, IPTC, comments, MPF, JFXX thumbnail, maker note and serials", () => {
        for (const needle of [
          "http://ns.adobe.com",
          "Photoshop 3.0",
          "8BIM",
          PLANTED.iptc,
          PLANTED.comment,
          PLANTED.mpf,
          "JFXX",
          "MPF\0",
        ]) {
          expect(contains(out.bytes, needle), needle).toBe(false);
        }
        for (const secret of Object.values(SECRETS)) expect(contains(out.bytes, secret), secret).toBe(false);
        expect(jpegSegments(out.bytes).filter((s) => s.marker === 0xfe || s.marker === 0xed)).toEqual([]);
      });

      it("keeps only allow-listed EXIF, in the input's byte order, without GPS or orientation", () => {
        const tiff = jpegExifTiff(out.bytes)!;
        expect(String.fromCharCode(tiff[0]!)).toBe(littleEndian ? "I" : "M");
        const gpsTag = littleEndian ? [0x25, 0x88] : [0x88, 0x25];
        expect(contains(tiff, gpsTag)).toBe(false);
        const tags = tiffTags(tiff);
        expect([...tags.ifd0, ...tags.exif]).not.toContain(0x0112);
        expect([...tags.ifd0, ...tags.exif]).not.toContain(0x927c);
        expect(filterExif(tiff)).toMatchObject({ orientation: 1, metadata: KEPT });
        expect(out.metadata).toEqual(KEPT);
        expect(out.orientation).toBe(6);
        expect(jpegSegments(out.bytes).filter((s) => s.marker === 0xe1)).toHaveLength(1);
      });

      it("keeps ICC profile and Adobe segments byte for byte", () => {
        const { kept } = jpegMetadataSegments(littleEndian);
        for (const s of kept) expect(contains(out.bytes, s)).toBe(true);
      });

      it("copies frame, tables and entropy-coded data unchanged, so pixels are identical", () => {
        // A decoder's output depends only on these segments; see the report for a libvips decode.
        expect(decodingStream(out.bytes)).toEqual(decodingStream(input));
        expect(out).toMatchObject({ format: "jpeg", width: 16, height: 8 });
        expect(out.bytes[0]).toBe(0xff);
        expect(out.bytes.subarray(-2)).toEqual(Uint8Array.from([0xff, 0xd9]));
      });
    });
  }

  it("returns the input itself when there is nothing to remove", () => {
    const clean = encodeJpeg(16, 8, testPixel);
    const out = sanitizeImage(clean, "jpeg");
    expect(out.bytes).toBe(clean);
    expect(out).toMatchObject({ orientation: 1, metadata: {} });
  });

  it("drops COM and APPn segments found between progressive scans", () => {
    const input = jpegWithMetadata(true, { progressive: true });
    const firstScan = indexOfBytes(input, [0xff, 0xda]);
    const between = indexOfBytes(input, [0xff, 0xc4], firstScan); // the DHT before the first AC scan
    const withExtras = concat(
      input.subarray(0, between),
      seg(0xfe, text("LATE-COMMENT")),
      seg(0xe1, text(PLANTED.xmp)),
      input.subarray(between),
    );
    const out = sanitizeImage(withExtras, "jpeg");
    expect(out.bytes).toEqual(sanitizeImage(input, "jpeg").bytes);
  });

  it("removes a JFIF thumbnail but keeps the JFIF header", () => {
    const clean = encodeJpeg(16, 8, testPixel);
    const jfif = concat(text("JFIF\0"), [1, 1, 0, 0, 1, 0, 1, 2, 1], new Uint8Array(6).fill(0x77));
    const input = concat(clean.subarray(0, 2), seg(0xe0, jfif), clean.subarray(20));
    const app0 = jpegSegments(sanitizeImage(input, "jpeg").bytes)[0]!;
    expect(app0.bytes).toEqual(concat([0xff, 0xe0, 0, 16], text("JFIF\0"), [1, 1, 0, 0, 1, 0, 1, 0, 0]));
  });

  it("drops an unreadable EXIF block instead of refusing the picture", () => {
    const clean = encodeJpeg(16, 8, testPixel);
    const input = insertAfterJfif(clean, [seg(0xe1, concat(text("Exif\0\0"), text("garbage, not a TIFF")))]);
    const out = sanitizeImage(input, "jpeg");
    expect(out.bytes).toEqual(clean);
    expect(out.orientation).toBe(1);
  });

  it.each([
    ["a ZIP", ZIP],
    ["HTML", HTML],
    ["a second JPEG", encodeJpeg(8, 8, testPixel)],
    ["one zero byte", Uint8Array.from([0])],
  ])("refuses %s appended after EOI (polyglot)", (_name, tail) => {
    expect(() => sanitizeImage(concat(jpegWithMetadata(), tail), "jpeg")).toThrow(ImageStructureError);
  });

  it("refuses truncated and malformed files", () => {
    const input = jpegWithMetadata();
    const bad = [
      input.subarray(0, 1),
      input.subarray(0, 30), // inside the EXIF segment
      input.subarray(0, input.length - 2), // no EOI
      input.subarray(0, input.length - 200), // inside the scan
      concat([0xff, 0xd8], text("not a marker")),
      concat(input.subarray(0, 20), [0x00], input.subarray(20)), // garbage between segments
      concat(input.subarray(0, 2), seg(0xf7, new Uint8Array(4)), input.subarray(2)), // JPEG-LS SOF55
      concat(input.subarray(0, 2), [0xff, 0xd9]), // EOI with no scan
      concat([0xff, 0xd8], input.subarray(indexOfBytes(input, [0xff, 0xda]))), // scan before frame
    ];
    for (const bytes of bad) expect(() => sanitizeImage(bytes, "jpeg")).toThrow(ImageStructureError);
  });

  it("sanitizes a ~20 MiB JPEG quickly and with one output-sized copy", () => {
    const input = largeJpeg(20 * 1024 * 1024);
    expect(input.length).toBeGreaterThan(20 * 1024 * 1024);
    const start = performance.now();
    const out = sanitizeImage(input, "jpeg");
    const ms = performance.now() - start;
    // Memory: the segments kept are subarray views of the input; the output buffer is the only
    // allocation of note (input + one output-sized copy; none when nothing is removed). The
    // scan is walked with indexOf, never decoded.
    expect(out.width).toBe(2400);
    expect(out.height).toBeGreaterThan(1000);
    expect(out.bytes.length).toBe(input.length - 32 * 65535);
    expect(out.bytes.buffer).not.toBe(input.buffer);
    expect(ms).toBeLessThan(2000);
    const scan = indexOfBytes(out.bytes, [0xff, 0xda]);
    const tail = input.subarray(input.length - (out.bytes.length - scan));
    let same = tail.length === out.bytes.length - scan;
    for (let i = 0; same && i < tail.length; i++) same = tail[i] === out.bytes[scan + i];
    expect(same).toBe(true); // toEqual on 19 MB arrays would take minutes
  });
});
