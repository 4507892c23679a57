import { describe, expect, it } from "vitest";
import { CSV_BOM, csvCell, csvRow } from "../../../src/lib/csv";

describe("CSV cells (RFC 4180 with the formula-injection guard)", () => {
  it.each([
    [null, ""],
    [undefined, ""],
    [1450, "1450"],
    [0.25, "0.25"],
    [Number.NaN, ""],
    [true, "true"],
    ["plain", "plain"],
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["cr\rlf", '"cr\rlf"'],
    ["", ""],
    ["ünïcödé ✓", "ünïcödé ✓"],
  ])("%j -> %j", (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it.each([
    ["=SUM(A1:A2)", "'=SUM(A1:A2)"],
    ["+1", "'+1"],
    ["-2", "'-2"],
    ["@cmd", "'@cmd"],
    ["\tindent", "'\tindent"],
    ["\rreturn", '"\'\rreturn"'],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ["a=b", "a=b"],
  ])("guards %j as %j", (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it("leaves out NUL characters (stored before control characters were refused)", () => {
    expect(csvCell("a\u0000b")).toBe("ab");
    expect(csvCell("\u0000=SUM(A1)")).toBe("'=SUM(A1)");
  });

  it("never guards numbers", () => {
    expect(csvCell(-3)).toBe("-3");
  });

  it("ends a row with CRLF and starts a file with the UTF-8 byte-order mark", () => {
    expect(csvRow(["id", 1, null, "x,y"])).toBe('id,1,,"x,y"\r\n');
    expect(new TextEncoder().encode(CSV_BOM)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
  });
});
