import { z } from "@hono/zod-openapi";

// The building blocks of every text member a client writes (decisions.md, "Added in the second
// round"): names, brands, models, titles, descriptions, notes, search text. C0 control characters
// are refused rather than stripped: a NUL ends the string early for SQLite's `length()` and for
// most readers of an export, and a silently altered value is worse than a clear 422. Lone UTF-16
// surrogates are refused too: they cannot be stored as UTF-8, so D1 would keep U+FFFD instead.
// Secrets and opaque values (passwords, codes, tokens, redirect URIs) are compared, never shown
// as text, and keep their own rules.

/** No C0 control character (U+0000 to U+001F). */
const SINGLE_LINE = /^[^\u0000-\u001F]*$/;
/** No C0 control character other than tab, line feed and carriage return. */
const MULTI_LINE = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F]*$/;
const LONE_SURROGATE = /\p{Cs}/u;

const SINGLE_LINE_DETAIL = "Must not contain control characters (U+0000 to U+001F).";
const MULTI_LINE_DETAIL = "Must not contain control characters (U+0000 to U+001F) other than tab, line feed and carriage return.";
const SURROGATE_DETAIL = "Must be well-formed Unicode (no unpaired surrogate).";

/** Whether `text` may be stored as one line (`multiline`: or several); the refusal's detail, or null. */
export function textViolation(text: string, multiline = false): string | null {
  if (!(multiline ? MULTI_LINE : SINGLE_LINE).test(text)) return multiline ? MULTI_LINE_DETAIL : SINGLE_LINE_DETAIL;
  if (LONE_SURROGATE.test(text)) return SURROGATE_DETAIL;
  return null;
}

// Both checks abort, so a refused value gets one entry, not a second one for its length. The
// control-character rule goes into the OpenAPI schema as `pattern`; checks chained after these
// (`.trim().min(2).max(100)`) run on a value already cleared.
const checked = (pattern: RegExp, detail: string) =>
  z
    .string()
    .regex(pattern, { message: detail, abort: true })
    .refine((text) => !LONE_SURROGATE.test(text), { message: SURROGATE_DETAIL, abort: true });

/** A one-line text member (name, brand, model, title, search text): no control characters at all. */
export const singleLineText = () => checked(SINGLE_LINE, SINGLE_LINE_DETAIL);

/** A multi-line text member (description, notes): tab, LF and CR allowed, no other control character. */
export const multilineText = () => checked(MULTI_LINE, MULTI_LINE_DETAIL);

/**
 * The one-line rule added to a string format of zod's own (`z.url()`, which lets control
 * characters through). A refinement plus a documented pattern, since a `regex` check would take
 * the place of the format in the OpenAPI schema.
 */
export function oneLine<T extends z.ZodURL | z.ZodString>(schema: T): T {
  return schema
    .refine((text) => SINGLE_LINE.test(text), { message: SINGLE_LINE_DETAIL, abort: true })
    .openapi({ pattern: SINGLE_LINE.source }) as T;
}
