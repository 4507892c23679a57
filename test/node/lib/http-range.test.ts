import { describe, expect, it } from "vitest";
import { parseRange } from "../../../src/lib/http-range";

// RFC 9110, 14.1.2: one byte range per request is honoured; anything that cannot be read as one
// byte range is ignored (null: the whole representation is sent).

describe("parseRange: satisfiable single byte ranges", () => {
  it.each([
    ["bytes=0-9", 100, { offset: 0, length: 10 }],
    ["bytes=2-5", 10, { offset: 2, length: 4 }],
    ["bytes=9-9", 10, { offset: 9, length: 1 }],
    ["bytes=0-0", 1, { offset: 0, length: 1 }],
    // Open-ended: from the first position to the end.
    ["bytes=5-", 10, { offset: 5, length: 5 }],
    ["bytes=0-", 10, { offset: 0, length: 10 }],
    // Suffix: the last n bytes, all of them when n exceeds the size.
    ["bytes=-4", 10, { offset: 6, length: 4 }],
    ["bytes=-10", 10, { offset: 0, length: 10 }],
    ["bytes=-500", 10, { offset: 0, length: 10 }],
    // A last position past the end is clipped to the end.
    ["bytes=5-999", 10, { offset: 5, length: 5 }],
    ["bytes=0-99999999999999", 10, { offset: 0, length: 10 }],
    // The unit is case-insensitive; surrounding whitespace is ignored.
    ["BYTES=1-2", 10, { offset: 1, length: 2 }],
    ["  bytes=1-2  ", 10, { offset: 1, length: 2 }],
  ])("%j of %i bytes -> %j", (header, size, range) => {
    expect(parseRange(header, size)).toEqual(range);
  });
});

describe("parseRange: unsatisfiable (416)", () => {
  it.each([
    ["bytes=10-", 10],
    ["bytes=10-20", 10],
    ["bytes=11-", 10],
    ["bytes=1000-2000", 10],
    // A suffix of zero bytes selects nothing.
    ["bytes=-0", 10],
    ["bytes=-000", 10],
    // An empty representation has no first byte.
    ["bytes=0-", 0],
    ["bytes=0-0", 0],
  ])("%j of %i bytes", (header, size) => {
    expect(parseRange(header, size)).toBe("unsatisfiable");
  });
});

describe("parseRange: ignored (null, the full body is sent)", () => {
  it.each([
    [null],
    [undefined],
    [""],
    // No positions at all.
    ["bytes=-"],
    // Malformed.
    ["bytes"],
    ["bytes="],
    ["bytes=abc"],
    ["bytes=1-a"],
    ["bytes=a-1"],
    ["bytes=1.5-2"],
    ["bytes=+1-2"],
    ["bytes=1--2"],
    ["bytes=--2"],
    ["bytes 1-2"],
    ["bytes:1-2"],
    ["bytes = 1-2"],
    ["bytes=1 - 2"],
    // Several ranges may be ignored (a single range is all this service serves).
    ["bytes=0-1,4-5"],
    ["bytes=0-1, 4-5"],
    ["bytes=-1,-2"],
    // Another unit.
    ["items=0-1"],
    ["none"],
    // A last position before the first is not a valid range-spec.
    ["bytes=5-4"],
    ["bytes=9-0"],
  ])("%j", (header) => {
    expect(parseRange(header, 10)).toBeNull();
  });

  it("ignores a suffix range on an empty representation (satisfiable, RFC 9110 14.1.1, but nothing can be sent as 206)", () => {
    // "When a selected representation has zero length, the only satisfiable form of range-spec is
    // a suffix-range with a non-zero suffix-length": not a 416, and no 206 can express zero bytes,
    // so the Range field is ignored and the (empty) representation is sent whole.
    expect(parseRange("bytes=-4", 0)).toBeNull();
    expect(parseRange("bytes=-1", 0)).toBeNull();
    // A zero-length suffix stays unsatisfiable whatever the size.
    expect(parseRange("bytes=-0", 0)).toBe("unsatisfiable");
  });

  it("ignores an invalid range even when its first position lies beyond the end", () => {
    // bytes=50-40 is not a valid range-spec: the field is ignored, not answered with 416.
    expect(parseRange("bytes=50-40", 10)).toBeNull();
  });
});

describe("parseRange: lengths always fit the representation", () => {
  it("never gives a range that reaches past the last byte", () => {
    const sizes = [1, 2, 7, 10, 1024];
    const headers = ["bytes=0-", "bytes=3-", "bytes=0-5000", "bytes=6-6", "bytes=-3", "bytes=-5000", "bytes=1-1"];
    for (const size of sizes) {
      for (const header of headers) {
        const range = parseRange(header, size);
        if (range === null || range === "unsatisfiable") continue;
        expect(range.offset, `${header} of ${size}`).toBeGreaterThanOrEqual(0);
        expect(range.length, `${header} of ${size}`).toBeGreaterThan(0);
        expect(range.offset + range.length, `${header} of ${size}`).toBeLessThanOrEqual(size);
      }
    }
  });
});
