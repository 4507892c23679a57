import { describe, expect, it } from "vitest";
import {
  FREE_FORM_JSON_BOUNDS,
  jsonBoundsViolation,
  jsonTextDeeperThan,
  pathBeyondDepth,
  storedJsonObject,
} from "../../src/lib/json-bounds";

const bytes = (text: string) => new TextEncoder().encode(text);
const deepText = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("jsonTextDeeperThan", () => {
  it("counts the nesting of objects and arrays, without parsing", () => {
    expect(jsonTextDeeperThan(bytes('{"a":[{"b":[]}]}'), 4)).toBe(false);
    expect(jsonTextDeeperThan(bytes('{"a":[{"b":[]}]}'), 3)).toBe(true);
    expect(jsonTextDeeperThan(bytes(deepText(100_000)), 64)).toBe(true);
    expect(jsonTextDeeperThan(bytes("1"), 0)).toBe(false);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(jsonTextDeeperThan(bytes(`{"a":"[[[[{{{{","b":"\\"[[[[","c":"\\\\"}`), 1)).toBe(false);
    expect(jsonTextDeeperThan(bytes(`{"a":"\\\\",  "b":[[]]}`), 2)).toBe(true);
    expect(jsonTextDeeperThan(bytes(`{"é[":"ü{"}`), 1)).toBe(false);
  });
});

describe("pathBeyondDepth", () => {
  it("names the first container too deep, in document order", () => {
    expect(pathBeyondDepth({ a: [1, { b: {} }], c: [[[]]] }, 3)).toEqual(["a", 1, "b"]);
    expect(pathBeyondDepth({ a: [1, { b: 2 }], c: [[[]]] }, 3)).toEqual(["c", 0, 0]);
    expect(pathBeyondDepth({ a: [1, { b: {} }], c: [[[]]] }, 4)).toBeNull();
    expect(pathBeyondDepth("text", 0)).toBeNull();
    expect(pathBeyondDepth({}, 0)).toEqual([]);
    expect(pathBeyondDepth(JSON.parse(deepText(200_000)), 64)).toHaveLength(64);
  });
});

describe("jsonBoundsViolation", () => {
  it("checks depth, keys over every level, and compact UTF-8 size", () => {
    const { depth, keys, bytes: size } = FREE_FORM_JSON_BOUNDS;
    expect([depth, keys, size]).toEqual([10, 500, 16_384]);
    expect(jsonBoundsViolation(JSON.parse(deepText(10)))).toBeNull();
    expect(jsonBoundsViolation(JSON.parse(deepText(11)))).toBe("Nested deeper than 10 levels.");
    const members = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, null]));
    expect(jsonBoundsViolation({ x: [members(250, "a"), members(249, "b")] })).toBeNull();
    expect(jsonBoundsViolation({ x: [members(250, "a"), members(250, "b")] })).toBe("More than 500 keys in all.");
    expect(jsonBoundsViolation({ s: "€".repeat(5_457) })).toBeNull(); // 16,371 + 8 bytes
    expect(jsonBoundsViolation({ s: "€".repeat(5_460) })).toBe("Larger than 16384 bytes as compact JSON.");
    expect(jsonBoundsViolation({ s: "x".repeat(100_000) }, { ...FREE_FORM_JSON_BOUNDS, bytes: Number.POSITIVE_INFINITY })).toBeNull();
  });
});

describe("storedJsonObject", () => {
  it("serves stored objects, and null for anything a response could not carry", () => {
    expect(storedJsonObject('{"a":{"b":[1]}}')).toEqual({ a: { b: [1] } });
    expect(storedJsonObject(null)).toBeNull();
    expect(storedJsonObject("")).toBeNull();
    expect(storedJsonObject("{broken")).toBeNull();
    expect(storedJsonObject("[1]")).toBeNull();
    expect(storedJsonObject("42")).toBeNull();
    expect(storedJsonObject(`{"a":${deepText(63)}}`)).toEqual({ a: JSON.parse(deepText(63)) });
    expect(storedJsonObject(`{"a":${deepText(64)}}`)).toBeNull();
  });
});
