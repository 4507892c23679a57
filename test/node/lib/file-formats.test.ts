import { describe, expect, it } from "vitest";
import {
  checkFileBytes,
  declaredTypeFits,
  essenceOf,
  extensionOf,
  type FileFormat,
  RESEARCH_FILE_EXTENSIONS,
  RESEARCH_FILE_FORMATS,
} from "../../../src/lib/file-formats";

const format = (extension: string): FileFormat => {
  const found = RESEARCH_FILE_FORMATS[extension];
  if (!found) throw new Error(`no format for .${extension}`);
  return found;
};

const ascii = (text: string) => Uint8Array.from(text, (ch) => ch.charCodeAt(0));
const utf8 = (text: string) => new TextEncoder().encode(text);
const concat = (...parts: (Uint8Array | number[])[]) => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
};
const zeros = (n: number) => new Uint8Array(n);

const HDF5_SIGNATURE = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * A minimal ZIP archive with one stored entry `name`: a local file header (PK\3\4) at 0, the
 * entry's data, a central directory header (PK\1\2, file name at offset 46) and the end record.
 */
function zipWith(name: string, data = utf8("<xml/>")): Uint8Array {
  const nameBytes = utf8(name);
  const u16 = (value: number) => [value & 0xff, (value >>> 8) & 0xff];
  const u32 = (value: number) => [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff];
  const local = concat(
    [0x50, 0x4b, 0x03, 0x04],
    [...u16(20), ...u16(0), ...u16(0), ...u16(0), ...u16(0)], // version, flags, method (stored), time, date
    [...u32(0), ...u32(data.length), ...u32(data.length)], // crc (not checked here), sizes
    [...u16(nameBytes.length), ...u16(0)],
    nameBytes,
    data,
  );
  const central = concat(
    [0x50, 0x4b, 0x01, 0x02],
    [...u16(20), ...u16(20), ...u16(0), ...u16(0), ...u16(0), ...u16(0)], // made by, needed, flags, method, time, date
    [...u32(0), ...u32(data.length), ...u32(data.length)],
    [...u16(nameBytes.length), ...u16(0), ...u16(0), ...u16(0), ...u16(0)], // name, extra, comment lengths, disk, internal attrs
    [...u32(0), ...u32(0)], // external attrs, local header offset
    nameBytes,
  );
  expect(central.indexOf(nameBytes[0]!, 46)).toBe(46);
  const end = concat(
    [0x50, 0x4b, 0x05, 0x06],
    [...u16(0), ...u16(0), ...u16(1), ...u16(1)],
    [...u32(central.length), ...u32(local.length)],
    u16(0),
  );
  return concat(local, central, end);
}

describe("extensionOf", () => {
  it.each([
    ["data.csv", "csv"],
    ["DATA.CSV", "csv"],
    ["scan.Tar.HDF5", "hdf5"],
    ["cube.hdr", "hdr"],
    ["archive.tar.gz", "gz"],
    ["a.b", "b"],
  ])("%j -> %j", (name, extension) => {
    expect(extensionOf(name)).toBe(extension);
  });

  it.each([["README"], [".hidden"], ["trailing."], [""], ["."]])("%j has none", (name) => {
    expect(extensionOf(name)).toBeNull();
  });
});

describe("essenceOf", () => {
  it.each([
    ["text/csv", "text/csv"],
    ["Text/CSV; charset=ISO-8859-1", "text/csv"],
    ["  application/PDF  ", "application/pdf"],
    ["application/json;charset=utf-8", "application/json"],
    ["", ""],
  ])("%j -> %j", (declared, essence) => {
    expect(essenceOf(declared)).toBe(essence);
  });
});

describe("declaredTypeFits", () => {
  it("accepts application/octet-stream, with or without parameters, for every format", () => {
    for (const extension of RESEARCH_FILE_EXTENSIONS) {
      expect(declaredTypeFits(format(extension), "application/octet-stream"), extension).toBe(true);
      expect(declaredTypeFits(format(extension), "Application/Octet-Stream; name=x"), extension).toBe(true);
    }
  });

  it("accepts what browsers and spreadsheets declare for csv", () => {
    for (const declared of [
      "text/csv",
      "text/csv; charset=utf-8",
      "TEXT/CSV",
      "application/vnd.ms-excel",
      "application/csv",
      "text/plain",
    ]) {
      expect(declaredTypeFits(format("csv"), declared), declared).toBe(true);
    }
  });

  it("refuses types that do not go with the format", () => {
    expect(declaredTypeFits(format("pdf"), "text/plain")).toBe(false);
    expect(declaredTypeFits(format("pdf"), "application/x-pdf-but-not")).toBe(false);
    expect(declaredTypeFits(format("csv"), "application/pdf")).toBe(false);
    expect(declaredTypeFits(format("docx"), "application/zip")).toBe(false);
    expect(declaredTypeFits(format("docx"), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")).toBe(false);
    expect(declaredTypeFits(format("tif"), "image/jpeg")).toBe(false);
    expect(declaredTypeFits(format("txt"), "text/html")).toBe(false);
    expect(declaredTypeFits(format("json"), "text/javascript")).toBe(false);
  });

  it("accepts each format's own served type", () => {
    for (const extension of RESEARCH_FILE_EXTENSIONS) {
      const own = format(extension);
      expect(declaredTypeFits(own, own.contentType), extension).toBe(true);
    }
  });
});

describe("the allow-list", () => {
  it("covers exactly the formats of decisions.md", () => {
    expect([...RESEARCH_FILE_EXTENSIONS].sort()).toEqual(
      [
        "csv",
        "tsv",
        "txt",
        "md",
        "json",
        "pdf",
        "docx",
        "xlsx",
        "pptx",
        "hdr",
        "dat",
        "img",
        "raw",
        "h5",
        "hdf5",
        "ntf",
        "nitf",
        "tif",
        "tiff",
      ].sort(),
    );
  });

  it("serves text formats as UTF-8 and never as HTML or script", () => {
    for (const extension of RESEARCH_FILE_EXTENSIONS) {
      const { contentType } = format(extension);
      expect(
        ["text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/javascript"],
        extension,
      ).not.toContain(essenceOf(contentType));
      if (format(extension).check.kind === "text") expect(contentType, extension).toMatch(/; charset=utf-8$/);
    }
  });
});

describe("checkFileBytes: signatures", () => {
  it("pdf needs %PDF- at the start", () => {
    expect(checkFileBytes(format("pdf"), ascii("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"))).toBeNull();
    expect(checkFileBytes(format("pdf"), ascii("%PDF-"))).toBeNull();
    expect(checkFileBytes(format("pdf"), ascii("%PDF"))).toMatch(/signature/);
    expect(checkFileBytes(format("pdf"), ascii(" %PDF-1.7"))).toMatch(/signature/);
    expect(checkFileBytes(format("pdf"), ascii("<html>%PDF-1.7"))).toMatch(/signature/);
    expect(checkFileBytes(format("pdf"), new Uint8Array())).toMatch(/signature/);
  });

  it.each(["h5", "hdf5"])("HDF5 (.%s) at offset 0 or after a 512-byte user block, nowhere else", (extension) => {
    const hdf5 = format(extension);
    expect(checkFileBytes(hdf5, concat(HDF5_SIGNATURE, zeros(64)))).toBeNull();
    expect(checkFileBytes(hdf5, concat(zeros(512), HDF5_SIGNATURE, zeros(64)))).toBeNull();
    expect(checkFileBytes(hdf5, concat(zeros(1024), HDF5_SIGNATURE))).toBeNull();
    expect(checkFileBytes(hdf5, concat(zeros(100), HDF5_SIGNATURE, zeros(600)))).toMatch(/signature/);
    expect(checkFileBytes(hdf5, concat(zeros(513), HDF5_SIGNATURE))).toMatch(/signature/);
    // A truncated signature is not one.
    expect(checkFileBytes(hdf5, Uint8Array.from(HDF5_SIGNATURE.slice(0, 7)))).toMatch(/signature/);
    expect(checkFileBytes(hdf5, concat(zeros(512), HDF5_SIGNATURE.slice(0, 4)))).toMatch(/signature/);
  });

  it.each(["tif", "tiff"])("TIFF (.%s): little-endian II*\\0 and big-endian MM\\0* (and BigTIFF)", (extension) => {
    const tiff = format(extension);
    expect(checkFileBytes(tiff, concat([0x49, 0x49, 0x2a, 0x00], [8, 0, 0, 0]))).toBeNull();
    expect(checkFileBytes(tiff, concat([0x4d, 0x4d, 0x00, 0x2a], [0, 0, 0, 8]))).toBeNull();
    expect(checkFileBytes(tiff, concat([0x49, 0x49, 0x2b, 0x00], [8, 0, 0, 0]))).toBeNull();
    expect(checkFileBytes(tiff, concat([0x4d, 0x4d, 0x00, 0x2b], [0, 8, 0, 0]))).toBeNull();
    // Mixed byte orders and other images are refused.
    expect(checkFileBytes(tiff, concat([0x49, 0x49, 0x00, 0x2a], [0, 0, 0, 8]))).toMatch(/signature/);
    expect(checkFileBytes(tiff, concat([0x4d, 0x4d, 0x2a, 0x00], [8, 0, 0, 0]))).toMatch(/signature/);
    expect(checkFileBytes(tiff, Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toMatch(/signature/);
  });

  it.each(["ntf", "nitf"])("NITF (.%s): NITF or NSIF at the start", (extension) => {
    const nitf = format(extension);
    expect(checkFileBytes(nitf, ascii("NITF02.10"))).toBeNull();
    expect(checkFileBytes(nitf, ascii("NSIF01.00"))).toBeNull();
    expect(checkFileBytes(nitf, ascii("nitf02.10"))).toMatch(/signature/);
    expect(checkFileBytes(nitf, ascii(" NITF02.10"))).toMatch(/signature/);
  });
});

describe("checkFileBytes: text", () => {
  it.each(["csv", "tsv", "txt", "md", "json"])(".%s accepts UTF-8 text, with or without a BOM", (extension) => {
    const text = format(extension);
    expect(checkFileBytes(text, utf8("id,name\n1,Zürich ✓\n"))).toBeNull();
    expect(checkFileBytes(text, concat([0xef, 0xbb, 0xbf], utf8("a,b\n")))).toBeNull();
    expect(checkFileBytes(text, utf8(""))).toBeNull();
  });

  it.each(["csv", "tsv", "txt", "md", "json"])(".%s refuses invalid UTF-8 and NUL bytes", (extension) => {
    const text = format(extension);
    // Latin-1 "é", a lone continuation byte, an overlong "/", a truncated sequence at the end.
    for (const bad of [[0x63, 0x61, 0x66, 0xe9], [0x80], [0xc0, 0xaf], concat(utf8("ok "), [0xe2, 0x82])]) {
      expect(checkFileBytes(text, Uint8Array.from(bad)), JSON.stringify(bad)).toMatch(/UTF-8/);
    }
    expect(checkFileBytes(text, concat(utf8("a,b"), [0x00], utf8("c")))).toMatch(/UTF-8/);
    // UTF-16 text carries NUL bytes.
    expect(checkFileBytes(text, Uint8Array.from([0xff, 0xfe, 0x61, 0x00, 0x62, 0x00]))).toMatch(/UTF-8/);
  });

  it("checks text across its 64 KiB decoding pieces", () => {
    const txt = format("txt");
    // A three-byte character split across the 65,536-byte boundary is still valid text...
    const split = concat(utf8("a".repeat(65_535)), utf8("€"), utf8("tail"));
    expect(checkFileBytes(txt, split)).toBeNull();
    // ...while an invalid byte or a NUL far past the first piece is still found.
    expect(checkFileBytes(txt, concat(utf8("a".repeat(200_000)), [0xff], utf8("b")))).toMatch(/UTF-8/);
    expect(checkFileBytes(txt, concat(utf8("a".repeat(200_000)), [0x00]))).toMatch(/UTF-8/);
    // A multi-byte character cut off at the very end.
    expect(checkFileBytes(txt, concat(utf8("a".repeat(65_536)), [0xe2, 0x82]))).toMatch(/UTF-8/);
  });

  it("an ENVI header (.hdr) must start with ENVI and be UTF-8 text", () => {
    const hdr = format("hdr");
    expect(checkFileBytes(hdr, utf8("ENVI\ndescription = {cube}\nsamples = 640\nlines = 480\nbands = 224\n"))).toBeNull();
    expect(checkFileBytes(hdr, utf8("envi\nsamples = 640\n"))).toMatch(/ENVI/);
    expect(checkFileBytes(hdr, utf8("samples = 640\nENVI\n"))).toMatch(/ENVI/);
    expect(checkFileBytes(hdr, utf8(" ENVI\n"))).toMatch(/ENVI/);
    expect(checkFileBytes(hdr, utf8("ENV"))).toMatch(/ENVI/);
    expect(checkFileBytes(hdr, concat(utf8("ENVI\n"), [0x00, 0x01]))).toMatch(/UTF-8/);
    expect(checkFileBytes(hdr, concat(utf8("ENVI\n"), [0xff]))).toMatch(/UTF-8/);
  });
});

describe("checkFileBytes: Office Open XML", () => {
  it("a docx is a ZIP with a word/ part in its central directory", () => {
    expect(checkFileBytes(format("docx"), zipWith("word/document.xml"))).toBeNull();
  });

  it("an xlsx or pptx does not pass as a docx, nor the other way round", () => {
    expect(checkFileBytes(format("docx"), zipWith("xl/workbook.xml"))).toMatch(/word\//);
    expect(checkFileBytes(format("docx"), zipWith("ppt/presentation.xml"))).toMatch(/word\//);
    expect(checkFileBytes(format("xlsx"), zipWith("xl/workbook.xml"))).toBeNull();
    expect(checkFileBytes(format("xlsx"), zipWith("word/document.xml"))).toMatch(/xl\//);
    expect(checkFileBytes(format("pptx"), zipWith("ppt/presentation.xml"))).toBeNull();
    expect(checkFileBytes(format("pptx"), zipWith("xl/workbook.xml"))).toMatch(/ppt\//);
  });

  it("the folder must begin the entry name, in a central directory header", () => {
    // "myword/..." holds "word/" but not at the start of the name.
    expect(checkFileBytes(format("docx"), zipWith("myword/document.xml"))).toMatch(/word\//);
    expect(checkFileBytes(format("docx"), zipWith("WORD/document.xml"))).toMatch(/word\//);
    // The folder name in the data or the local header alone is not enough.
    expect(checkFileBytes(format("docx"), zipWith("xl/workbook.xml", utf8("word/document.xml")))).toMatch(/word\//);
  });

  it("needs the ZIP local file header at offset 0", () => {
    const zip = zipWith("word/document.xml");
    expect(checkFileBytes(format("docx"), concat([0x20], zip))).toMatch(/Office Open XML/);
    const notZip = zip.slice();
    notZip[2] = 0x05;
    expect(checkFileBytes(format("docx"), notZip)).toMatch(/Office Open XML/);
    expect(checkFileBytes(format("docx"), utf8("word/document.xml"))).toMatch(/Office Open XML/);
    expect(checkFileBytes(format("docx"), new Uint8Array())).toMatch(/Office Open XML/);
  });

  it("a central directory header cut off before its name does not count", () => {
    const zip = zipWith("word/document.xml");
    const start = findSequence(zip, [0x50, 0x4b, 0x01, 0x02]);
    expect(start).toBeGreaterThan(0);
    // Everything up to the first byte of the name at offset 46: no name left to read.
    expect(checkFileBytes(format("docx"), zip.subarray(0, start + 46))).toMatch(/Office Open XML/);
    expect(checkFileBytes(format("docx"), zip.subarray(0, start + 46 + "word/".length))).toBeNull();
  });
});

function findSequence(bytes: Uint8Array, sequence: readonly number[]): number {
  outer: for (let i = 0; i + sequence.length <= bytes.length; i++) {
    for (let j = 0; j < sequence.length; j++) if (bytes[i + j] !== sequence[j]) continue outer;
    return i;
  }
  return -1;
}

describe("checkFileBytes: raw data", () => {
  it.each(["dat", "img", "raw"])(".%s has no signature: any bytes pass", (extension) => {
    const raw = format(extension);
    expect(checkFileBytes(raw, Uint8Array.from([0x00, 0xff, 0x00, 0x80, 0x7f]))).toBeNull();
    expect(checkFileBytes(raw, utf8("<html><script>alert(1)</script>"))).toBeNull();
    expect(checkFileBytes(raw, new Uint8Array())).toBeNull();
  });

  it("raw data is served as application/octet-stream and declared only as that", () => {
    for (const extension of ["dat", "img", "raw"]) {
      expect(format(extension).contentType).toBe("application/octet-stream");
      expect(declaredTypeFits(format(extension), "application/octet-stream")).toBe(true);
      expect(declaredTypeFits(format(extension), "text/plain")).toBe(false);
    }
  });
});
