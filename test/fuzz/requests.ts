import fc from "fast-check";
import { type Hint, type Schema, SchemaArbitraries } from "./schema-arbitraries";
import { deepNesting, HOSTILE_HEADER_VALUES, HOSTILE_SEGMENTS, hostileNumber, hostileString, poolRef, Raw, Ref } from "./values";
import type { PrincipalName } from "./world";

// One generated request per fast-check run, built from one operation of the OpenAPI document: the
// path's parameters (values of records that exist, and values that are not ids at all), its query
// (valid by the schema, out of range, unknown, malformed percent-encoding), its headers, a body
// (valid, with one member wrong, hostile as a whole, of another media type) and who sends it.
// Requests are plain data with `Ref`s into the world, resolved when sent.

export interface OperationObject {
  operationId?: string;
  parameters?: { name: string; in: "path" | "query" | "header" | "cookie"; required?: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema; example?: unknown }> };
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

export interface Operation {
  method: string;
  template: string;
  object: OperationObject;
}

/** How the principal's credentials travel (or fail to). */
export type Credential = "bearer" | "cookie" | "cookie-cross-site" | "garbage-bearer" | "tampered-bearer" | "basic";

export type Body =
  | { kind: "json"; value: unknown; contentType: string }
  | { kind: "text"; text: string; contentType: string | null }
  | { kind: "bytes"; bytes: number[]; contentType: string }
  | { kind: "form"; fields: [string, unknown][] }
  | { kind: "multipart"; parts: MultipartPart[]; boundary: string; broken?: "no-end" | "wrong-boundary" | "no-type-boundary" };

export interface MultipartPart {
  name: string;
  value: string | { filename: string; type: string; fixture: FileFixture };
}

/** A file's bytes: a named fixture, possibly mutated (bit flips, truncation, junk appended). */
export interface FileFixture {
  base: "jpeg" | "png" | "gif" | "webp" | "bmp" | "csv" | "pdf" | "empty" | "random";
  flips: [number, number][];
  truncateTo?: number;
  append?: number[];
  seed?: number;
}

export interface FuzzRequest {
  operation: string;
  method: string;
  template: string;
  /** Path parameters: `Ref`s to a world assignment, or text already percent-encoded. */
  params: Record<string, Ref | string>;
  /** Query pairs; a `Raw` value is sent as it is (already encoded). */
  query: [string, unknown][];
  headers: Record<string, string | Ref>;
  as: PrincipalName;
  credential: Credential;
  body?: Body;
}

/** Operations that can end, change or delete the sender's own account or session: sent by a scratch account. */
const SELF_OPERATIONS = new Set([
  "POST /v1/auth/sessions/revoke-all",
  "POST /v1/auth/mfa/totp/setup",
  "POST /v1/auth/mfa/totp/confirm",
  "POST /v1/auth/mfa/totp/disable",
  "POST /v1/auth/mfa/recovery-codes/regenerate",
  "POST /v1/auth/bearer/logout",
  "POST /v1/auth/bearer/refresh",
  "POST /v1/auth/session/logout",
  "POST /v1/auth/session/refresh",
  "PATCH /v1/users/me",
  "DELETE /v1/users/me",
  "DELETE /v1/oauth/{provider}/associate",
]);

export const isSelfOperation = (operation: string) => SELF_OPERATIONS.has(operation);

/** Members whose values must name records or credentials of the world for a request to succeed. */
function hintsFor(operation: string): Hint {
  return (name, schema) => {
    const integer = schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"));
    switch (name) {
      case "material_id":
        return integer ? poolRef("material") : undefined;
      case "product_type_id":
        return poolRef("product-type");
      case "taxonomy_id":
        return poolRef("taxonomy");
      case "category_id":
      case "supercategory_id":
        return poolRef("category");
      case "product_id":
        return fc.oneof(poolRef("product"), poolRef("component"));
      case "category_ids":
        return fc.array(poolRef("category"), { minLength: 1, maxLength: 2 });
      case "material_ids":
        return fc.array(poolRef("material"), { minLength: 1, maxLength: 2 });
      case "current_password":
        return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref("password")) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) });
      case "mfa_code":
        return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref("totp")) }, { weight: 1, arbitrary: fc.stringMatching(/^\d{6}$/) });
      case "password":
      case "new_password":
        // The schema says only "12 to 128 characters" in words (the length check has its own code).
        return fc.oneof(
          {
            weight: 4,
            arbitrary: fc.stringMatching(/^[a-z]{4,9}(-[a-z0-9]{3,9}){2,4}$/).filter((text) => text.length >= 12 && text.length <= 128),
          },
          { weight: 1, arbitrary: fc.string({ maxLength: 140 }) },
        );
      case "refresh_token":
        return fc.oneof(
          { weight: 3, arbitrary: fc.constant(new Ref("refresh-token")) },
          { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
        );
      case "code":
        if (operation === "POST /v1/plugins/rpi-cam/pairing/claim") return poolRef("pairing-code");
        if (operation.startsWith("POST /v1/auth/mfa/"))
          return fc.oneof({ weight: 3, arbitrary: fc.constant(new Ref("totp")) }, { weight: 1, arbitrary: fc.stringMatching(/^\d{6}$/) });
        return undefined;
      case "url":
        return fc.oneof(
          fc.stringMatching(/^[A-Za-z0-9_-]{11}$/).map((id) => `https://www.youtube.com/watch?v=${id}`),
          fc.constantFrom("https://vimeo.com/123", "https://example.org/v.mp4", "javascript:alert(1)", "https://www.youtube.com/watch?v="),
        );
      default:
        return undefined;
    }
  };
}

function principals(operation: Operation, self: boolean, valid: boolean): fc.Arbitrary<PrincipalName> {
  const secured = (operation.object.security?.length ?? 0) > 0;
  const weighted = (entries: [PrincipalName, number][]) =>
    fc.oneof(...entries.filter(([, weight]) => weight > 0).map(([name, weight]) => ({ weight, arbitrary: fc.constant(name) })));
  if (self)
    return weighted([
      ["scratch", 6],
      ["scratch-totp", operation.template.includes("/mfa/") ? 4 : 1],
      ["none", valid ? 0 : 1],
    ]);
  if (operation.template.startsWith("/v1/admin/")) {
    return valid
      ? fc.constant("admin")
      : weighted([
          ["admin", 4],
          ["owner", 1],
          ["superuser-without-totp", 1],
          ["unverified", 1],
          ["none", 1],
        ]);
  }
  if (secured)
    return valid
      ? weighted([
          ["owner", 6],
          ["admin", 1],
        ])
      : weighted([
          ["owner", 3],
          ["admin", 1],
          ["stranger", 2],
          ["unverified", 1],
          ["none", 1],
        ]);
  return valid
    ? weighted([
        ["none", 3],
        ["owner", 2],
        ["admin", 1],
      ])
    : weighted([
        ["none", 3],
        ["owner", 2],
        ["admin", 1],
        ["stranger", 1],
      ]);
}

function credentials(valid: boolean): fc.Arbitrary<Credential> {
  if (valid)
    return fc.oneof({ weight: 5, arbitrary: fc.constant("bearer" as const) }, { weight: 1, arbitrary: fc.constant("cookie" as const) });
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant("bearer" as const) },
    { weight: 1, arbitrary: fc.constant("cookie" as const) },
    { weight: 1, arbitrary: fc.constant("cookie-cross-site" as const) },
    { weight: 1, arbitrary: fc.constant("garbage-bearer" as const) },
    { weight: 1, arbitrary: fc.constant("tampered-bearer" as const) },
    { weight: 1, arbitrary: fc.constant("basic" as const) },
  );
}

/** `arbitrary` in `weight` runs of `outOf`, undefined in the others. */
function rarely<T>(arbitrary: fc.Arbitrary<T>, weight: number, outOf: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: outOf - weight, arbitrary: fc.constant(undefined) }, { weight, arbitrary });
}

/** A query or path value from a schema's valid instance. */
function asText(value: unknown): unknown {
  if (value instanceof Ref || value instanceof Raw) return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Hostile query values: hostile text (sent percent-encoded), and raw encodings that do not decode. */
const hostileQueryValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString() },
  { weight: 2, arbitrary: hostileNumber().map((raw) => raw.text) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom("%", "%zz", "%00", "%ED%A0%80", "%FF%FE", "%C0%80", "a%2Cb", "+", "%2B", "%20", ",,,", "a,".repeat(60))
      .map((text) => new Raw(text)),
  },
);

const FORMATS = ["json", "csv", "parquet"];

export class RequestArbitraries {
  readonly schemas: Record<string, Schema>;

  constructor(document: { components: { schemas: Record<string, Schema> } }) {
    this.schemas = document.components.schemas;
  }

  /**
   * Every request fast-check may send for `operation`: two in five meant to succeed (every part
   * valid, sent by someone allowed), the others with any part hostile.
   */
  forOperation(operation: Operation): fc.Arbitrary<FuzzRequest> {
    const name = `${operation.method.toUpperCase()} ${operation.template}`;
    const space = new SchemaArbitraries(this.schemas, hintsFor(name));
    const request = (valid: boolean) =>
      fc
        .record({
          params: this.params(operation, valid),
          query: this.query(operation, space, valid),
          headers: this.headers(operation, space, valid),
          as: principals(operation, isSelfOperation(name), valid),
          credential: credentials(valid),
          body: this.body(operation, space, valid),
        })
        .map(({ params, query, headers, as, credential, body }) => {
          const built: FuzzRequest = {
            operation: name,
            method: operation.method.toUpperCase(),
            template: operation.template,
            params,
            query,
            headers,
            as,
            credential,
          };
          if (body) built.body = body;
          return built;
        });
    return fc.oneof({ weight: 2, arbitrary: request(true) }, { weight: 3, arbitrary: request(false) });
  }

  private params(operation: Operation, valid: boolean): fc.Arbitrary<Record<string, Ref | string>> {
    const names = [...operation.template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
    if (names.length === 0) return fc.constant({});
    // One index for all parameters, so pairs (a product and one of its images) stay together.
    const existing = fc.nat(31).map((index) => Object.fromEntries(names.map((param) => [param, new Ref("pool", param, index)])));
    if (valid) return existing;
    const schemaOf = (param: string) =>
      operation.object.parameters?.find((p) => p.in === "path" && p.name === param)?.schema ?? { type: "string" };
    const space = new SchemaArbitraries(this.schemas);
    const other = (param: string) =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
        // Valid by the schema but naming nothing (ids out of the world's range).
        { weight: 2, arbitrary: space.valid(schemaOf(param)).map((value) => encodePiece(String(value))) },
        { weight: 1, arbitrary: hostileString().map((text) => encodePiece(text)) },
      );
    return fc.oneof(
      { weight: 1, arbitrary: existing },
      {
        weight: 2,
        arbitrary: fc
          .tuple(existing, fc.constantFrom(...names))
          .chain(([values, param]) => other(param).map((value) => ({ ...values, [param]: value }))),
      },
    );
  }

  private query(operation: Operation, space: SchemaArbitraries, valid: boolean): fc.Arbitrary<[string, unknown][]> {
    const params = (operation.object.parameters ?? []).filter((p) => p.in === "query");
    const pairs = params.map((param) => {
      // An array parameter (`fields` of the facets) is sent repeated, one pair per item.
      const good =
        param.name === "format"
          ? fc.constantFrom(...FORMATS)
          : space.valid(param.schema).map((value) => (Array.isArray(value) ? value.map(asText) : asText(value)));
      const values = valid
        ? good
        : fc.oneof(
            { weight: 2, arbitrary: good },
            { weight: 2, arbitrary: space.invalid(param.schema, 2).map(asText) },
            { weight: 2, arbitrary: hostileQueryValue },
          );
      const pair = values.map((value): [string, unknown] => [param.name, value]);
      // Required parameters nearly always (always in valid requests); optional ones in one run of three.
      return param.required ? (valid ? pair : rarely(pair, 19, 20)) : rarely(pair, 1, 3);
    });
    const unknown = valid
      ? fc.constant(undefined)
      : rarely(
          fc.oneof(
            fc.tuple(fc.constantFrom("unknown", "page[size]", "size[]", "__proto__", "name[like]", "order_by", ""), hostileQueryValue),
            // A parameter given twice.
            params.length > 0
              ? fc.tuple(fc.constantFrom(...params.map((p) => p.name)), fc.constantFrom("1", "2", "x"))
              : fc.tuple(fc.constant("x"), fc.constant("1")),
          ),
          1,
          3,
        );
    return fc.tuple(fc.tuple(...pairs), unknown).map(([chosen, extra]) => {
      const list = chosen
        .filter((pair): pair is [string, unknown] => pair !== undefined)
        .flatMap(([name, value]): [string, unknown][] =>
          Array.isArray(value) ? value.map((item): [string, unknown] => [name, item]) : [[name, value]],
        );
      if (extra) list.push(extra as [string, unknown]);
      return list;
    });
  }

  private headers(operation: Operation, space: SchemaArbitraries, valid: boolean): fc.Arbitrary<Record<string, string | Ref>> {
    const declared = (operation.object.parameters ?? []).filter((p) => p.in === "header");
    const entries = declared.map((param) => {
      const lower = param.name.toLowerCase();
      const good: fc.Arbitrary<string | Ref> =
        lower === "if-match"
          ? fc.constant(new Ref("version"))
          : lower === "idempotency-key"
            ? // A few fixed keys, so that keys are reused with the same and with another body.
              fc.oneof(fc.constantFrom("fuzz-key-1", "fuzz-key-2"), space.valid(param.schema).map(String))
            : space.valid(param.schema).map(String);
      const value = valid
        ? good
        : fc.oneof({ weight: 3, arbitrary: good }, { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_HEADER_VALUES) });
      return fc.option(
        value.map((v): [string, string | Ref] => [param.name, v]),
        { freq: param.required ? 20 : 2, nil: undefined },
      );
    });
    const extra = valid
      ? fc.constant(undefined)
      : rarely(
          fc.oneof(
            fc.tuple(fc.constant("x-request-id"), fc.constantFrom(...HOSTILE_HEADER_VALUES, "fuzz-request-1")),
            fc.tuple(fc.constant("accept"), fc.constantFrom("text/html", "application/xml", "*/*", "image/*", "")),
            fc.tuple(fc.constant("if-none-match"), fc.constantFrom(...HOSTILE_HEADER_VALUES)),
            fc.tuple(fc.constant("origin"), fc.constantFrom("https://evil.example", "null", "http://localhost")),
            fc.tuple(fc.constant("sec-fetch-site"), fc.constantFrom("cross-site", "same-origin", "none")),
            fc.tuple(
              fc.constant("range"),
              fc.constantFrom(
                "bytes=0-1",
                "bytes=5-2",
                "bytes=-1",
                "bytes=0-",
                "bytes=99999999-",
                "bytes=a-b",
                "items=0-1",
                "bytes=0-1,3-4",
              ),
            ),
          ),
          1,
          3,
        );
    return fc.tuple(fc.tuple(...entries), extra).map(([chosen, added]) => {
      const headers: Record<string, string | Ref> = {};
      for (const entry of chosen) if (entry) headers[entry[0]] = entry[1];
      if (added) headers[added[0]] = added[1];
      return headers;
    });
  }

  private body(operation: Operation, space: SchemaArbitraries, valid: boolean): fc.Arbitrary<Body | undefined> {
    const content = operation.object.requestBody?.content;
    if (!content) {
      // A GET cannot carry a body (fetch refuses to build the request).
      if (valid || operation.method === "get") return fc.constant(undefined);
      return fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant<Body>({ kind: "json", value: { unexpected: true }, contentType: "application/json" }) },
        { weight: 1, arbitrary: hostileBody },
      );
    }
    const options: fc.WeightedArbitrary<Body | undefined>[] = [];
    if (!valid) options.push({ weight: 2, arbitrary: hostileBody });
    if (!operation.object.requestBody?.required) options.push({ weight: 1, arbitrary: fc.constant(undefined) });
    const json = content["application/json"];
    if (json?.schema) {
      const schema = json.schema;
      const asJson = (value: unknown, contentType = "application/json"): Body => ({ kind: "json", value, contentType });
      options.push({ weight: 6, arbitrary: space.valid(schema).map((value) => asJson(value)) });
      const example = space.resolve(schema).example;
      if (example !== undefined) options.push({ weight: 2, arbitrary: fc.constant(asJson(example)) });
      if (!valid) {
        options.push(
          { weight: 8, arbitrary: space.invalid(schema).map((value) => asJson(value)) },
          // The right body under another media type, or a JSON one with parameters.
          {
            weight: 1,
            arbitrary: fc
              .tuple(
                space.valid(schema),
                fc.constantFrom(
                  "text/plain",
                  "application/json; charset=utf-8",
                  "application/JSON",
                  "application/merge-patch+json",
                  "application/json;charset=latin1",
                ),
              )
              .map(([value, type]) => asJson(value, type)),
          },
        );
      }
    }
    const form = content["application/x-www-form-urlencoded"];
    if (form?.schema) {
      options.push({
        weight: 3,
        arbitrary: (valid ? space.valid(form.schema) : space.invalid(form.schema, 1)).map(
          (value): Body => ({
            kind: "form",
            fields:
              value !== null && typeof value === "object" && !Array.isArray(value)
                ? Object.entries(value).map(([k, v]) => [k, asText(v)])
                : [["value", asText(value)]],
          }),
        ),
      });
    }
    const multipart = content["multipart/form-data"];
    if (multipart?.schema) options.push({ weight: 20, arbitrary: multipartBody(operation.template, valid) });
    return fc.oneof(...options);
  }
}

/** Encodes text for a path segment or query, keeping lone surrogates (which encodeURIComponent refuses) as the bytes a broken client would send. */
export function encodePiece(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

/** Bodies that are no valid instance of anything: not JSON, not UTF-8, too deep, too large. */
const hostileBody: fc.Arbitrary<Body> = fc.oneof(
  fc
    .constantFrom(
      "",
      "null",
      "[]",
      "{",
      '{"a":1,}',
      '{"a":1}{',
      "\ufeff{}",
      '{"name":"a","name":"b"}',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      "1e400",
      '"\\ud800"',
      "NaN",
      "{'a':1}",
    )
    .map((text): Body => ({ kind: "text", text, contentType: "application/json" })),
  deepNesting().map((raw): Body => ({ kind: "text", text: raw.text, contentType: "application/json" })),
  // Invalid UTF-8 inside a JSON string (a lone byte, an encoded surrogate, an overlong NUL).
  fc.constantFrom([0xff], [0xed, 0xa0, 0x80], [0xc0, 0x80], [0xe2, 0x82]).map(
    (bad): Body => ({
      kind: "bytes",
      bytes: [...new TextEncoder().encode('{"name":"a'), ...bad, ...new TextEncoder().encode('b"}')],
      contentType: "application/json",
    }),
  ),
  // Over the 1 MiB body limit.
  fc.constant<Body>({ kind: "text", text: `{"name":"${"a".repeat(1_100_000)}"}`, contentType: "application/json" }),
  fc
    .constantFrom("a=1&b=2", "<x/>", "--x--")
    .map((text): Body => ({ kind: "text", text, contentType: "application/x-www-form-urlencoded" })),
  fc.constant<Body>({ kind: "text", text: "{}", contentType: null }),
);

const BASES = ["jpeg", "png", "gif", "webp", "bmp", "csv", "pdf", "empty", "random"] as const;

/** A fixture as it is (mostly), or mutated: bit flips (most land in headers, where decoders are most fragile), truncation, junk appended. */
const fileFixture: fc.Arbitrary<FileFixture> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...BASES).map((base): FileFixture => ({ base, flips: [] })) },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        base: fc.constantFrom(...BASES),
        flips: fc.array(fc.tuple(fc.nat(400), fc.integer({ min: 1, max: 255 })), { maxLength: 3 }),
        truncateTo: fc.nat(300),
        append: fc.array(fc.nat(255), { maxLength: 8 }),
        seed: fc.nat(),
      },
      { requiredKeys: ["base", "flips"] },
    ),
  },
);

const TYPES_FOR: Record<FileFixture["base"], string[]> = {
  jpeg: ["image/jpeg"],
  png: ["image/png"],
  gif: ["image/gif"],
  webp: ["image/webp"],
  bmp: ["image/bmp"],
  csv: ["text/csv"],
  pdf: ["application/pdf"],
  empty: ["image/jpeg", "text/plain"],
  random: ["application/octet-stream", "image/png"],
};
const EXTENSIONS: Record<FileFixture["base"], string> = {
  jpeg: "jpg",
  png: "png",
  gif: "gif",
  webp: "webp",
  bmp: "bmp",
  csv: "csv",
  pdf: "pdf",
  empty: "jpg",
  random: "raw",
};

/** A multipart upload: a file part (a fixture, possibly mutated) and the optional text fields, or framing that is wrong. */
function multipartBody(template: string, valid: boolean): fc.Arbitrary<Body> {
  const images = template.endsWith("/images");
  if (valid) {
    const bases = images ? (["jpeg", "png", "gif", "webp", "bmp"] as const) : (["csv", "pdf"] as const);
    return fc
      .record({
        base: fc.constantFrom(...bases),
        description: fc.option(
          fc.string({ maxLength: 40 }).filter((text) => !/[\u0000-\u001f]/.test(text)),
          { nil: undefined },
        ),
        metadata: images
          ? fc.option(fc.constantFrom("{}", '{"lens":"50mm"}', '{"light":{"kelvin":5600}}'), { nil: undefined })
          : fc.constant(undefined),
      })
      .map(({ base, description, metadata }): Body => {
        const parts: MultipartPart[] = [
          { name: "file", value: { fixture: { base, flips: [] }, filename: `upload.${EXTENSIONS[base]}`, type: TYPES_FOR[base][0]! } },
        ];
        if (description !== undefined) parts.push({ name: "description", value: description });
        if (metadata !== undefined) parts.push({ name: "image_metadata", value: metadata });
        return { kind: "multipart", parts, boundary: "fuzz-boundary-7d3f" };
      });
  }
  const filename = fc.oneof(
    { weight: 6, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: hostileString().map((text) => `${text}.jpg`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("../../x.jpg", "a".repeat(300) + ".jpg", "noext", ".jpg", "x.JPG", "x.tar.gz", "😀.png", 'quo"te.jpg'),
    },
  );
  const file = fc
    .tuple(
      fileFixture,
      filename,
      rarely(fc.constantFrom("image/jpeg", "image/png", "text/plain", "application/octet-stream", "image/svg+xml", ""), 1, 5),
    )
    .map(
      ([fixture, name, type]): MultipartPart => ({
        name: "file",
        value: { fixture, filename: name ?? `upload.${EXTENSIONS[fixture.base]}`, type: type ?? TYPES_FOR[fixture.base][0]! },
      }),
    );
  const text = (field: string, good: fc.Arbitrary<string>) =>
    rarely(
      fc
        .oneof({ weight: 3, arbitrary: good }, { weight: 2, arbitrary: hostileString() })
        .map((value): MultipartPart => ({ name: field, value })),
      1,
      2,
    );
  const metadata = fc.oneof(
    fc.constantFrom(
      "{}",
      '{"lens":"50mm"}',
      '{"exif":{"iso":100}}',
      "[]",
      "null",
      "not json",
      "{",
      '{"a":'.repeat(20) + "1" + "}".repeat(20),
    ),
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  );
  return fc
    .record({
      file: rarely(file, 11, 12),
      second: rarely(file, 1, 12),
      description: text("description", fc.string({ maxLength: 40 })),
      image_metadata: images ? text("image_metadata", metadata) : fc.constant(undefined),
      unknown: rarely(fc.constant<MultipartPart>({ name: "unknown_field", value: "x" }), 1, 12),
      broken: rarely(fc.constantFrom("no-end" as const, "wrong-boundary" as const, "no-type-boundary" as const), 1, 12),
    })
    .map(({ file: first, second, description, image_metadata, unknown, broken }): Body => {
      const parts: MultipartPart[] = [];
      for (const part of [first, second, description, image_metadata, unknown]) if (part) parts.push(part);
      return { kind: "multipart", parts, boundary: "fuzz-boundary-7d3f", ...(broken ? { broken } : {}) };
    });
}
