import { z } from "@hono/zod-openapi";

// Bounds of the free-form JSON members (video_metadata, image_metadata, capture metadata, the
// body and params of a camera command). Without them a client could store a value that every
// later read fails to serialise (JSON.stringify recurses: 10,000 levels exhaust the stack), so
// they are enforced where a request comes in, and reads of what is already stored check again.
// Every walk here is iterative, so no input can exhaust the stack of the code guarding it.

export interface JsonBounds {
  /** Levels of nesting: each object or array is one, so `{"a": {"b": 1}}` has 2. */
  depth: number;
  /** Object members, counted over every level. */
  keys: number;
  /** Bytes of its compact JSON text (UTF-8); `Infinity` where another limit bounds the size. */
  bytes: number;
}

/** The bounds of every free-form JSON member a client writes. */
export const FREE_FORM_JSON_BOUNDS: JsonBounds = { depth: 10, keys: 500, bytes: 16 * 1024 };

/** Deepest nesting of any JSON request body; far above what any valid body needs (a create with components 10 levels deep needs about 25). */
export const MAX_JSON_BODY_DEPTH = 64;

/**
 * Deepest JSON the service passes on from storage or from a camera: well below what serialising
 * a response can take. Stored metadata nested deeper (written before the bounds) reads as null.
 */
export const MAX_SERVED_JSON_DEPTH = 64;

/** The bounds in words, for OpenAPI descriptions. */
export const FREE_FORM_JSON_RULE =
  `At most ${FREE_FORM_JSON_BOUNDS.depth} levels of nesting, ${FREE_FORM_JSON_BOUNDS.keys} keys in all and ` +
  `${FREE_FORM_JSON_BOUNDS.bytes.toLocaleString("en")} bytes as compact JSON; over any of them: 422 at the member.`;

const isContainer = (value: unknown): value is object => typeof value === "object" && value !== null;

/** The members or items of a container, with their keys. */
function childrenOf(value: object): [PropertyKey, unknown][] {
  return Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
}

/**
 * The path of the first container (in document order) nested deeper than `limit` levels, or
 * null when there is none.
 */
export function pathBeyondDepth(value: unknown, limit: number): PropertyKey[] | null {
  if (!isContainer(value)) return null;
  const stack: { value: object; path: PropertyKey[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!;
    if (path.length + 1 > limit) return path;
    const children = childrenOf(node);
    for (let i = children.length - 1; i >= 0; i--) {
      const [key, child] = children[i]!;
      if (isContainer(child)) stack.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}

function keyCount(value: unknown): number {
  let keys = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isContainer(node)) continue;
    if (!Array.isArray(node)) keys += Object.keys(node).length;
    for (const child of Object.values(node)) if (isContainer(child)) stack.push(child);
  }
  return keys;
}

/** Which bound `value` breaks, in words, or null when it keeps them all. */
export function jsonBoundsViolation(value: unknown, bounds: JsonBounds = FREE_FORM_JSON_BOUNDS): string | null {
  if (pathBeyondDepth(value, bounds.depth) !== null) return `Nested deeper than ${bounds.depth} levels.`;
  if (keyCount(value) > bounds.keys) return `More than ${bounds.keys} keys in all.`;
  if (!Number.isFinite(bounds.bytes)) return null;
  // Only now, with the depth known to be small, is serialising it safe.
  const bytes = new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength;
  if (bytes > bounds.bytes) return `Larger than ${bounds.bytes} bytes as compact JSON.`;
  return null;
}

/** `schema` with `bounds` checked after it; a breach is one 422 entry at the member. */
export function withinJsonBounds<T extends z.ZodType>(schema: T, bounds: JsonBounds = FREE_FORM_JSON_BOUNDS): T {
  return schema.superRefine((value, ctx) => {
    const detail = jsonBoundsViolation(value, bounds);
    if (detail) ctx.addIssue({ code: "custom", message: detail });
  }) as T;
}

/** A free-form JSON object member, within `FREE_FORM_JSON_BOUNDS`. */
export const freeFormObject = () => withinJsonBounds(z.record(z.string(), z.unknown()));

/** A free-form JSON value of any type, within `bounds`. */
export const freeFormValue = (bounds: JsonBounds = FREE_FORM_JSON_BOUNDS) => withinJsonBounds(z.unknown(), bounds);

/**
 * A stored JSON object as a response may carry it: null for text that is not a JSON object, or
 * that nests deeper than any response can serialise (written before the bounds were enforced).
 */
export function storedJsonObject(text: string | null): Record<string, unknown> | null {
  if (text === null || text === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isContainer(value) || Array.isArray(value)) return null;
  return pathBeyondDepth(value, MAX_SERVED_JSON_DEPTH) === null ? (value as Record<string, unknown>) : null;
}

const [QUOTE, BACKSLASH, OPEN_BRACE, OPEN_BRACKET, CLOSE_BRACE, CLOSE_BRACKET] = [0x22, 0x5c, 0x7b, 0x5b, 0x7d, 0x5d];

/**
 * Whether JSON text (as UTF-8 bytes) nests deeper than `limit`, found by scanning the bytes
 * without parsing them. Text that is not JSON may give either answer; the parser judges it later.
 */
export function jsonTextDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
