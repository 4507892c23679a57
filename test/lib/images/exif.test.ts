import { describe, expect, it } from "vitest";
import { EXIF_ALLOW_LIST, filterExif, ImageStructureError } from "../../../src/lib/images/exif";
import { buildTiff, cameraExif, SECRETS, T } from "../../support/image-fixtures";
import { contains, tiffTags } from "../../support/image-fixtures-inspect";

const EXPECTED = {
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

/** A hand-laid little-endian TIFF: header, then whatever IFD bytes the test writes at offset 8. */
function rawTiff(size: number, write: (dv: DataView) => void): Uint8Array {
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  out.set([0x49, 0x49, 42, 0, 8, 0, 0, 0]);
  write(dv);
  return out;
}
const entry = (dv: DataView, at: number, tag: number, type: number, count: number, value: number) => {
  dv.setUint16(at, tag, true);
  dv.setUint16(at + 2, type, true);
  dv.setUint32(at + 4, count, true);
  dv.setUint32(at + 8, value, true);
};

describe("EXIF allow-list", () => {
  it("names exactly the kept tags", () => {
    expect([...EXIF_ALLOW_LIST].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const littleEndian of [true, false]) {
    describe(littleEndian ? "little-endian (II)" : "big-endian (MM)", () => {
      const input = cameraExif(littleEndian, 6);
      const result = filterExif(input);

      it("keeps the allow-listed values, converted", () => {
        expect(result.metadata).toEqual(EXPECTED);
        expect(result.orientation).toBe(6);
      });

      it("writes a new TIFF in the same byte order, holding only IFD0 and the Exif IFD", () => {
        const tiff = result.tiff!;
        expect(String.fromCharCode(tiff[0]!, tiff[1]!)).toBe(littleEndian ? "II" : "MM");
        const tags = tiffTags(tiff);
        expect(tags.ifd0).toEqual([0x010f, 0x0110, 0x8769]);
        expect(tags.exif).toEqual([0x829a, 0x829d, 0x8822, 0x8827, 0x9003, 0x920a, 0xa403, 0xa405, 0xa433, 0xa434]);
        expect(tags.next).toBe(0); // no IFD1, so no thumbnail
        expect(tiff.length).toBeLessThan(input.length);
      });

      it("leaves out orientation, GPS, maker note, serials, owner and thumbnail", () => {
        const tiff = result.tiff!;
        for (const secret of Object.values(SECRETS)) expect(contains(tiff, secret)).toBe(false);
        expect(contains(tiff, "R98")).toBe(false); // Interop IFD
        const reparsed = filterExif(tiff);
        expect(reparsed.metadata).toEqual(EXPECTED);
        expect(reparsed.orientation).toBe(1);
        expect(filterExif(tiff).tiff).toEqual(tiff); // stable: filtering twice changes nothing
      });
    });
  }

  it("returns a null TIFF when no allowed tag is present, but still the orientation", () => {
    const tiff = buildTiff(
      {
        entries: [
          { tag: 0x0112, type: T.SHORT, values: [8] },
          { tag: 0x0131, type: T.ASCII, text: "Editor" },
        ],
      },
      true,
    );
    expect(filterExif(tiff)).toEqual({ tiff: null, orientation: 8, metadata: {} });
  });

  it.each([0, 9, 0xffff])("treats orientation %i as 1", (value) => {
    expect(filterExif(buildTiff({ entries: [{ tag: 0x0112, type: T.SHORT, values: [value] }] }, false)).orientation).toBe(1);
  });

  it("skips values of the wrong type, zero denominators, and cleans strings", () => {
    const tiff = buildTiff(
      {
        entries: [
          { tag: 0x010f, type: T.SHORT, values: [5] }, // Make must be ASCII
          { tag: 0x0110, type: T.ASCII, text: "  Model\u0007 One \0junk after NUL" },
          {
            tag: 0x8769,
            ifd: {
              entries: [
                { tag: 0x829a, type: T.RATIONAL, values: [1, 0] },
                { tag: 0x829d, type: T.SRATIONAL, values: [28, 10] },
                { tag: 0x8827, type: T.LONG, values: [102400] },
              ],
            },
          },
        ],
      },
      true,
    );
    expect(filterExif(tiff).metadata).toEqual({ Model: "Model One", ISO: 102400 });
  });
});

describe("EXIF parsing of hostile blocks", () => {
  it.each([
    ["too short", Uint8Array.from([0x49, 0x49, 42])],
    ["no byte order", Uint8Array.from([0x41, 0x42, 42, 0, 8, 0, 0, 0, 0, 0])],
    ["wrong magic", Uint8Array.from([0x49, 0x49, 43, 0, 8, 0, 0, 0, 0, 0])],
    ["IFD0 offset past the end", rawTiff(16, (dv) => dv.setUint32(4, 0xfffffff0, true))],
    ["IFD0 offset inside the header", rawTiff(16, (dv) => dv.setUint32(4, 2, true))],
    ["entry count past the end", rawTiff(32, (dv) => dv.setUint16(8, 0xffff, true))],
  ])("throws ImageStructureError: %s", (_name, bytes) => {
    expect(() => filterExif(bytes)).toThrow(ImageStructureError);
  });

  it("skips a tag whose value lies outside the block, and one with a huge count", () => {
    const tiff = rawTiff(64, (dv) => {
      dv.setUint16(8, 3, true);
      entry(dv, 10, 0x010f, T.ASCII, 20, 0xffffff00); // Make: offset outside
      entry(dv, 22, 0x0110, T.ASCII, 0xffffffff, 8); // Model: 4 GiB long
      entry(dv, 34, 0xa434, T.ASCII, 0x7fffffff, 8); // not in IFD0's list anyway
    });
    expect(filterExif(tiff)).toEqual({ tiff: null, orientation: 1, metadata: {} });
  });

  it("skips an Exif pointer outside the block but keeps IFD0 tags", () => {
    const tiff = rawTiff(64, (dv) => {
      dv.setUint16(8, 2, true);
      entry(dv, 10, 0x010f, T.ASCII, 3, 0x00006241); // "Ab\0" inline
      entry(dv, 22, 0x8769, T.LONG, 1, 0x7ffffff0);
    });
    expect(filterExif(tiff).metadata).toEqual({ Make: "Ab" });
  });

  it("does not loop when IFDs point back at each other or at themselves", () => {
    const tiff = rawTiff(80, (dv) => {
      dv.setUint16(8, 2, true);
      entry(dv, 10, 0x010f, T.ASCII, 3, 0x00006241);
      entry(dv, 22, 0x8769, T.LONG, 1, 40); // Exif IFD at 40
      dv.setUint32(34, 8, true); // IFD0's next IFD is IFD0 itself
      dv.setUint16(40, 2, true);
      entry(dv, 42, 0x8827, T.SHORT, 1, 100);
      entry(dv, 54, 0x8769, T.LONG, 1, 8); // and the Exif IFD points back at IFD0
      dv.setUint32(66, 40, true);
    });
    expect(filterExif(tiff).metadata).toEqual({ Make: "Ab", ISO: 100 });
    const selfLoop = rawTiff(40, (dv) => {
      dv.setUint16(8, 1, true);
      entry(dv, 10, 0x8769, T.LONG, 1, 8); // the Exif IFD is IFD0
    });
    expect(filterExif(selfLoop)).toEqual({ tiff: null, orientation: 1, metadata: {} });
  });

  it("stays fast on an IFD of 65535 entries", () => {
    const tiff = rawTiff(8 + 2 + 65535 * 12 + 4, (dv) => {
      dv.setUint16(8, 65535, true);
      for (let i = 0; i < 65535; i++) entry(dv, 10 + i * 12, 0x0110, T.ASCII, 0xffffffff, 0xfffffff0);
    });
    const start = performance.now();
    expect(filterExif(tiff).tiff).toBeNull();
    expect(performance.now() - start).toBeLessThan(1000);
  });
});
