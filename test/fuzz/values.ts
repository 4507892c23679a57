import fc from "fast-check";

// The values the fuzz test puts into requests that are not plain JSON values: JSON text written as
// is (numbers JSON.stringify cannot write, nesting deeper than a recursive writer would go) and
// references to the records and credentials of the test's world, resolved when the request is
// sent. Generated requests stay plain data, so fast-check can print and shrink them, and a seed
// gives the same requests against the same world.

/** JSON text inserted as is where a value goes: `1e400`, `-0`, 10,000 nested arrays. */
export class Raw {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text.length > 80 ? `Raw(${this.text.slice(0, 40)}…${this.text.length} chars)` : `Raw(${this.text})`;
  }
}

/**
 * A value of the test's world, looked up when the request is sent: a record id from a pool
 * (`pool`, `index`), the signed-in user's password or next TOTP code, the target's version.
 */
export class Ref {
  constructor(
    readonly kind: "pool" | "password" | "totp" | "refresh-token" | "version",
    readonly pool = "",
    readonly index = 0,
  ) {}
  toString(): string {
    return this.kind === "pool" ? `Ref(${this.pool}[${this.index}])` : `Ref(${this.kind})`;
  }
}

export const poolRef = (pool: string) => fc.nat(31).map((index) => new Ref("pool", pool, index));

/** What a reference stands for, supplied by the world when the request is sent. */
export type Resolve = (ref: Ref) => unknown;

/** JSON text of `value`, writing `Raw` as is and resolving `Ref`s; without recursion, so any depth works. */
export function jsonText(value: unknown, resolve: Resolve): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  // A marker on the stack: write this literal text.
  class Lit {
    constructor(readonly text: string) {}
  }
  while (stack.length > 0) {
    let item = stack.pop();
    if (item instanceof Lit) {
      out.push(item.text);
      continue;
    }
    if (item instanceof Ref) item = resolve(item);
    if (item instanceof Raw) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      stack.push(new Lit("]"));
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push(item[i]);
        if (i > 0) stack.push(new Lit(","));
      }
      stack.push(new Lit("["));
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item);
      stack.push(new Lit("}"));
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push(entries[i]![1]);
        stack.push(new Lit(`${JSON.stringify(entries[i]![0])}:`));
        if (i > 0) stack.push(new Lit(","));
      }
      stack.push(new Lit("{"));
    } else if (item === undefined) {
      out.push("null");
    } else {
      // Lone surrogates come out as \ud800 escapes (well-formed JSON.stringify), as a client sends them.
      out.push(JSON.stringify(item));
    }
  }
  return out.join("");
}

/** `levels` arrays or objects nested in each other, as JSON text. */
export function nestedText(levels: number, kind: "array" | "object"): Raw {
  return kind === "array"
    ? new Raw(`${"[".repeat(levels)}${"]".repeat(levels)}`)
    : new Raw(`${'{"a":'.repeat(levels - 1)}{"a":1}${"}".repeat(levels - 1)}`);
}

/** Depths around the API's bounds: free-form members hold 10 levels, any body 64. */
export const DEPTHS = [10, 11, 63, 64, 65, 200, 10_000, 100_000] as const;

/** Numbers that break naive code: beyond doubles, beyond 2^53, beyond 64-bit integers, signed zero, subnormal. */
export const HOSTILE_NUMBERS = [
  "1e400",
  "-1e400",
  "1e308",
  "1.7976931348623157e308",
  "4.9e-324",
  "1e-400",
  "-0",
  "0",
  "-1",
  "0.5",
  "1.0",
  "2147483648",
  "-2147483649",
  "9007199254740993",
  "9223372036854775808",
  "-9223372036854775809",
  "123456789012345678901234567890",
  "1E+2",
] as const;

/** Text that has broken, or could break, a service like this one. */
export const HOSTILE_STRINGS = [
  "",
  " ",
  "\u0000",
  "\u0000ab",
  "a\u0000bc",
  "ab\u0000",
  "\u0001\u0002\u0007\u0008",
  "line\nbreak",
  "tab\there",
  "cr\rhere",
  "\u001b[31mred",
  "\u001f",
  "\u007f",
  "\u0085next-line",
  "\ud800",
  "a\udfffb",
  "\ud83d",
  "x\ud83dy",
  "\udc00\ud800",
  "\ufeffbom",
  "\ufffe\uffff",
  "\u2028\u2029",
  "\u202eevil",
  "\u200b",
  "🧪🧪🧪",
  "e\u0301",
  "İıſK",
  "%",
  "%%",
  "_",
  "\\",
  "%_\\%",
  "'; DROP TABLE products; --",
  '" OR 1=1 --',
  '"',
  "NEAR(a b)",
  "a OR b",
  "*",
  "-a",
  "a:b",
  "^",
  "../../etc/passwd",
  "..",
  "<script>alert(1)</script>",
  "${jndi:ldap://x}",
  "__proto__",
  "constructor",
  "~0~1/",
  "null",
  "NaN",
  "Infinity",
  "1e400",
  "-0",
  "0x10",
  "true",
  "a".repeat(49),
  "é".repeat(49),
  "a".repeat(101),
  "a".repeat(257),
  "🧪".repeat(101),
  "a".repeat(5_000),
  "a".repeat(70_000),
] as const;

/** Header-safe hostile values (a ByteString without NUL, CR or LF); ASCII only, as workerd warns on every other byte. */
export const HOSTILE_HEADER_VALUES = [
  "",
  " ",
  "\t",
  "*",
  '"',
  '""',
  '"1"',
  'W/"1"',
  '"1", "2"',
  "0",
  "-1",
  "1e400",
  "null",
  "%00",
  "a".repeat(129),
  "a".repeat(8_000),
  "../x",
  "<x>",
  "Bearer",
  "Bearer ",
  "Basic YTpi",
] as const;

/** Path segment values that are not ids: out of range, not numbers, percent-encoding that does not decode. */
export const HOSTILE_SEGMENTS = [
  "0",
  "-1",
  "1.5",
  "1e3",
  "01",
  "+1",
  " 1",
  "%201",
  "1%00",
  "%00",
  "%",
  "%zz",
  "%ED%A0%80",
  "%C0%AF",
  "%FF",
  "%F0%9F%A7%AA",
  "%EF%BC%91",
  "2147483648",
  "9007199254740993",
  "99999999999999999999999",
  "abc",
  "null",
  "undefined",
  "__proto__",
  "%2e%2e",
  "a".repeat(300),
  "9".repeat(2_000),
] as const;

/** Values and JSON text of every JSON type, for a member that expects another. */
export const WRONG_TYPES: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  "",
  "x",
  "1",
  [],
  [null],
  {},
  { a: 1 },
  new Raw("1e400"),
  new Raw("-0"),
  new Raw("123456789012345678901234567890"),
];

export const hostileString = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    // A short valid text with one hostile character spliced in somewhere.
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.string({ maxLength: 8 }),
          fc.constantFrom("\u0000", "\u0001", "\u001f", "\ud800", "\udfff", "\u0085", "\u2028", "\ufeff"),
          fc.string({ maxLength: 8 }),
        )
        .map(([a, b, c]) => a + b + c),
    },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  );

export const hostileNumber = (): fc.Arbitrary<Raw> => fc.constantFrom(...HOSTILE_NUMBERS).map((text) => new Raw(text));

export const deepNesting = (): fc.Arbitrary<Raw> =>
  fc
    .tuple(fc.constantFrom(...DEPTHS), fc.constantFrom("array" as const, "object" as const))
    .map(([levels, kind]) => nestedText(levels, kind));

/** Any value a member should not hold: wrong types, hostile text and numbers, deep nesting. */
export const wrongValue = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...WRONG_TYPES) },
    { weight: 3, arbitrary: hostileString() },
    { weight: 2, arbitrary: hostileNumber() },
    { weight: 1, arbitrary: deepNesting() },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
