import fc from "fast-check";
import { deepNesting, hostileNumber, hostileString, Raw, wrongValue } from "./values";

// fast-check arbitraries from the JSON Schemas of the app's OpenAPI document (3.1, so JSON Schema
// 2020-12): `valid` gives instances the schema accepts, `invalid` instances it refuses or that
// push at what it accepts (hostile text, numbers past any range, nesting past any bound, missing
// and unknown members). Only the keywords the document uses are interpreted; an unknown one fails
// loudly rather than giving "valid" values that are not.

export type Schema = { [keyword: string]: any };

/**
 * A value for a member whose meaning the schema cannot say: the id of a record that exists, the
 * signed-in user's password. Gets the member's name and schema; undefined: generate from the schema.
 */
export type Hint = (name: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;

const KNOWN = new Set([
  "$ref",
  "allOf",
  "anyOf",
  "oneOf",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "enum",
  "const",
  "default",
  "description",
  "example",
  "examples",
  "title",
  "nullable",
  "readOnly",
  "writeOnly",
  "deprecated",
  "discriminator",
]);

/** Patterns of the text members (src/lib/text.ts): no C0 control character, or none but tab, LF and CR. */
const SINGLE_LINE = "^[^\\u0000-\\u001F]*$";
const MULTI_LINE = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F]*$";

const ascii = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
const wider = fc.constantFrom("é", "ß", "Ω", "中", "🧪", "\u00a0", "\u0301", "\u200d", "ı", "\u007f", "\u0085", "\ufeff");
const singleLineUnit = fc.oneof({ weight: 12, arbitrary: ascii }, { weight: 1, arbitrary: wider });
const multiLineUnit = fc.oneof(
  { weight: 12, arbitrary: ascii },
  { weight: 1, arbitrary: wider },
  { weight: 1, arbitrary: fc.constantFrom("\t", "\n", "\r") },
);

/** Code points, as JSON Schema (and SQLite's `length()`) count them. */
const codePoints = (text: string) => [...text].length;

const MAX_DEPTH = 4;

export class SchemaArbitraries {
  private readonly validMemo = new Map<Schema, Map<number, fc.Arbitrary<unknown>>>();
  private readonly invalidMemo = new Map<Schema, Map<number, fc.Arbitrary<unknown>>>();

  constructor(
    private readonly schemas: Record<string, Schema>,
    private readonly hint: Hint = () => undefined,
  ) {}

  /** `schema` with its `$ref` followed and its `allOf` merged. */
  resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; current.$ref; hops++) {
      const name = /^#\/components\/schemas\/(.+)$/.exec(current.$ref)?.[1];
      const target = name === undefined ? undefined : this.schemas[name];
      if (!target || hops > 20) throw new Error(`unresolvable $ref ${current.$ref}`);
      const { $ref: _, ...siblings } = current;
      current = { ...target, ...siblings };
    }
    if (current.allOf) {
      const { allOf, ...rest } = current;
      let merged: Schema = rest;
      for (const part of allOf as Schema[]) {
        const resolved = this.resolve(part);
        merged = {
          ...resolved,
          ...merged,
          properties: { ...resolved.properties, ...merged.properties },
          required: [...(resolved.required ?? []), ...(merged.required ?? [])],
        };
      }
      current = merged;
    }
    for (const keyword of Object.keys(current)) {
      if (!KNOWN.has(keyword)) throw new Error(`schema keyword "${keyword}" is not interpreted by the fuzz generator`);
    }
    return current;
  }

  /** Instances `schema` accepts. */
  valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const memo = this.validMemo.get(schema) ?? new Map();
    this.validMemo.set(schema, memo);
    let arbitrary = memo.get(depth);
    if (!arbitrary) {
      arbitrary = this.buildValid(this.resolve(schema), depth);
      memo.set(depth, arbitrary);
    }
    return arbitrary;
  }

  /** Instances `schema` should refuse, and hostile ones at its edges. */
  invalid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const memo = this.invalidMemo.get(schema) ?? new Map();
    this.invalidMemo.set(schema, memo);
    let arbitrary = memo.get(depth);
    if (!arbitrary) {
      arbitrary = this.buildInvalid(this.resolve(schema), depth);
      memo.set(depth, arbitrary);
    }
    return arbitrary;
  }

  /** The instance types `schema` allows (no `type`: those its keywords imply). */
  types(schema: Schema): string[] {
    if (Array.isArray(schema.type)) return schema.type;
    if (typeof schema.type === "string") return [schema.type];
    if (schema.properties || schema.additionalProperties !== undefined) return ["object"];
    if (schema.items) return ["array"];
    if (schema.enum || schema.const !== undefined) return [];
    return ["any"];
  }

  private buildValid(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (alternatives) return fc.oneof(...alternatives.map((alternative) => this.valid(alternative, depth)));
    const types = this.types(schema);
    const nonNull = types.filter((type) => type !== "null");
    const arbitraries = nonNull.map((type) => this.validOfType(schema, type, depth));
    if (types.includes("null"))
      return fc.oneof({ weight: 5, arbitrary: fc.oneof(...arbitraries) }, { weight: 1, arbitrary: fc.constant(null) });
    return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
  }

  private validOfType(schema: Schema, type: string, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case "string":
        return validString(schema);
      case "integer":
        return validInteger(schema);
      case "number":
        return validNumber(schema);
      case "boolean":
        return fc.boolean();
      case "array":
        return this.validArray(schema, depth);
      case "object":
        return this.validObject(schema, depth);
      case "any":
        return fc.jsonValue({ maxDepth: 2 });
      default:
        throw new Error(`schema type "${type}" is not interpreted by the fuzz generator`);
    }
  }

  private validArray(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const minLength = schema.minItems ?? 0;
    const cap = depth >= MAX_DEPTH ? minLength : minLength + 3;
    const maxLength = Math.min(schema.maxItems ?? cap, cap);
    const items = schema.items ? this.valid(schema.items, depth + 1) : fc.jsonValue({ maxDepth: 1 });
    return fc.array(items, { minLength, maxLength });
  }

  private validObject(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = new Set<string>(schema.required ?? []);
    const names = Object.keys(properties).filter((name) => required.has(name) || depth < MAX_DEPTH);
    if (names.length === 0) {
      // Free-form JSON (metadata, preferences): a small dictionary.
      if (schema.additionalProperties === false) return fc.constant({});
      const values =
        typeof schema.additionalProperties === "object"
          ? this.valid(schema.additionalProperties, depth + 1)
          : fc.jsonValue({ maxDepth: 2 });
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), values, { maxKeys: 4 });
    }
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const name of names) {
      const resolved = this.resolve(properties[name]!);
      model[name] = this.hint(name, resolved) ?? this.valid(properties[name]!, depth + 1);
    }
    return fc.record(model, { requiredKeys: names.filter((name) => required.has(name)) });
  }

  private buildInvalid(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const shallow = depth >= 2;
    const options: fc.WeightedArbitrary<unknown>[] = [{ weight: 2, arbitrary: wrongValue() }];
    if (schema.enum) {
      options.push({
        weight: 3,
        arbitrary: fc.oneof(hostileString(), fc.constantFrom(...(schema.enum as unknown[]).map((value) => String(value).toUpperCase()))),
      });
      return fc.oneof(...options);
    }
    for (const type of this.types(schema)) {
      switch (type) {
        case "string":
          options.push({ weight: 4, arbitrary: invalidString(schema) });
          break;
        case "integer":
        case "number":
          options.push({ weight: 4, arbitrary: invalidNumber(schema, type) });
          break;
        case "array":
          if (!shallow) options.push({ weight: 4, arbitrary: this.invalidArray(schema, depth) });
          break;
        case "object":
          if (!shallow) options.push({ weight: 6, arbitrary: this.invalidObject(schema, depth) });
          break;
      }
    }
    return fc.oneof(...options);
  }

  private invalidArray(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const item = schema.items ? this.valid(schema.items, MAX_DEPTH) : fc.constant(1);
    const options: fc.Arbitrary<unknown>[] = [
      // More items than allowed, and far more (a thousand small ones).
      fc.array(item, { minLength: (schema.maxItems ?? 100) + 1, maxLength: (schema.maxItems ?? 100) + 1 }),
      fc.constant(Array.from({ length: 1_000 }, () => 1)),
      // Items that are wrong.
      fc.array(schema.items ? this.invalid(schema.items, depth + 1) : wrongValue(), { minLength: 1, maxLength: 3 }),
      deepNesting(),
    ];
    if (schema.minItems) options.push(fc.constant([]));
    return fc.oneof(...options);
  }

  private invalidObject(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const names = Object.keys(properties);
    const base = this.valid(schema, depth) as fc.Arbitrary<Record<string, unknown>>;
    const options: fc.Arbitrary<unknown>[] = [
      // Unknown members: read-only ones a client might try, prototype keys, anything.
      fc
        .tuple(
          base,
          fc.constantFrom(
            "id",
            "owner_id",
            "created_at",
            "version",
            "is_superuser",
            "role",
            "__proto__",
            "constructor",
            "prototype",
            "extra",
            "",
          ),
          wrongValue(),
        )
        .map(([value, name, extra]) => withMember(value, name, extra)),
      deepNesting(),
    ];
    if (names.length > 0) {
      // One member wrong (the wrong value chosen for that member's schema).
      options.push(
        fc.oneof(
          ...names.map((name) =>
            fc.tuple(base, this.invalid(properties[name]!, depth + 1)).map(([value, wrong]) => withMember(value, name, wrong)),
          ),
        ),
      );
      // Every member present, each possibly null: the widest valid-looking body.
      options.push(
        fc.record(Object.fromEntries(names.map((name) => [name, fc.oneof(this.valid(properties[name]!, MAX_DEPTH), fc.constant(null))]))),
      );
    }
    const required = (schema.required ?? []) as string[];
    if (required.length > 0) {
      options.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([value, name]) => {
          const copy = { ...value };
          delete copy[name];
          return copy;
        }),
      );
    }
    return fc.oneof(...options);
  }
}

/** `value` with `name` set to `member` (an own data property, `__proto__` included). */
function withMember(value: Record<string, unknown>, name: string, member: unknown): Record<string, unknown> {
  const copy = { ...value };
  Object.defineProperty(copy, name, { value: member, enumerable: true, writable: true, configurable: true });
  return copy;
}

function validString(schema: Schema): fc.Arbitrary<string> {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number = schema.maxLength ?? Number.POSITIVE_INFINITY;
  switch (schema.format) {
    case "date-time":
      return fc
        .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
        .map((date) => date.toISOString());
    case "date":
      return fc
        .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T00:00:00Z"), noInvalidDate: true })
        .map((date) => date.toISOString().slice(0, 10));
    case "email":
      return fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/).map((local) => `fz.${local}@example.org`);
    case "uuid":
      return fc.uuid();
    case "uri":
      return fc.stringMatching(/^[a-z0-9-]{1,12}$/).map((path) => `https://example.org/${path}`);
    case "binary":
      return fc.string({ maxLength: 16 });
    case undefined:
      break;
    default:
      throw new Error(`string format "${schema.format}" is not interpreted by the fuzz generator`);
  }
  const pattern: string | undefined = schema.pattern;
  if (pattern === undefined || pattern === SINGLE_LINE || pattern === MULTI_LINE) {
    const unit = pattern === MULTI_LINE ? multiLineUnit : singleLineUnit;
    if (maxLength === Number.POSITIVE_INFINITY) return fc.string({ unit, minLength, maxLength: minLength + 40 });
    // Short values mostly, and sometimes values exactly at the maximum (wide characters count one).
    return fc.oneof(
      { weight: 5, arbitrary: fc.string({ unit, minLength, maxLength: Math.min(maxLength, minLength + 24) }) },
      { weight: 1, arbitrary: fc.string({ unit, minLength: maxLength, maxLength }) },
      { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("é", "中", "🧪"), minLength: maxLength, maxLength }) },
    );
  }
  return fc.stringMatching(new RegExp(pattern, "u")).filter((text) => codePoints(text) >= minLength && codePoints(text) <= maxLength);
}

function invalidString(schema: Schema): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [hostileString()];
  if (schema.maxLength !== undefined) {
    options.push(fc.constantFrom("a", "中", "🧪").map((unit) => unit.repeat(schema.maxLength + 1)));
  }
  if (schema.minLength) options.push(fc.constant("a".repeat(schema.minLength - 1)), fc.constant(" ".repeat(schema.minLength)));
  if (schema.format === "date-time" || schema.format === "date") {
    options.push(
      fc.constantFrom(
        "2026-02-30T00:00:00Z",
        "2026-13-01",
        "0000-00-00T00:00:00Z",
        "99999-01-01T00:00:00Z",
        "2026-05-01T25:61:61Z",
        "yesterday",
        "1714560000",
      ),
    );
  }
  if (schema.format === "email")
    options.push(
      fc.constantFrom("@", "a@", "a@b", "a b@example.org", "a@example.org\u0000", `${"a".repeat(300)}@example.org`, '"a"@example.org'),
    );
  return fc.oneof(...options);
}

function validInteger(schema: Schema): fc.Arbitrary<number> {
  const min = Math.max(
    schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : (schema.minimum ?? -1_000),
    Number.MIN_SAFE_INTEGER,
  );
  const max = Math.min(
    schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : (schema.maximum ?? min + 1_000_000),
    Number.MAX_SAFE_INTEGER,
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max: Math.min(max, min + 100) }) },
    { weight: 1, arbitrary: fc.integer({ min, max }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
  );
}

function validNumber(schema: Schema): fc.Arbitrary<number> {
  const exclusive = schema.exclusiveMinimum !== undefined;
  const min: number = exclusive ? schema.exclusiveMinimum : (schema.minimum ?? -1e6);
  const max: number = schema.exclusiveMaximum ?? schema.maximum ?? 1e9;
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.double({
        min,
        max: Math.min(max, min + 1_000),
        minExcluded: exclusive,
        maxExcluded: schema.exclusiveMaximum !== undefined,
        noNaN: true,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.double({ min, max, minExcluded: exclusive, maxExcluded: schema.exclusiveMaximum !== undefined, noNaN: true }),
    },
  );
}

function invalidNumber(schema: Schema, type: string): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [hostileNumber()];
  const below = schema.exclusiveMinimum ?? (schema.minimum !== undefined ? schema.minimum - 1 : undefined);
  const above = schema.exclusiveMaximum ?? (schema.maximum !== undefined ? schema.maximum + 1 : undefined);
  if (below !== undefined) options.push(fc.constant(below));
  if (above !== undefined) options.push(fc.constant(above));
  if (type === "integer") options.push(fc.constantFrom(1.5, new Raw("1.0"), new Raw("1e0"), "1"));
  options.push(fc.constantFrom(new Raw("9".repeat(400)), new Raw("1e999999")));
  return fc.oneof(...options);
}
