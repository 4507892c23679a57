export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (e.g. the request id). */
  child(fields: LogFields): Logger;
}

/**
 * Members whose values are secrets whatever they hold. `code` is among them because one-time
 * codes travel in members of that name; log error codes as `error_code`.
 */
const SECRET_KEY =
  /pass(word)?|secret|token|authorization|cookie|(^|[-_])key$|api[-_]?key|credential|mfa|otp|recovery|signature|assertion|^code$/i;
const EMAIL = /([\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]*@((?:[\p{L}\p{N}-]+\.)+[\p{L}\p{N}-]+)/gu;
// Any scheme (https:, relab:, ...) or a path starting with `/`: links carry tokens in the query or fragment.
const LINK_EXTRAS = /((?:\b[a-z][a-z0-9+.-]*:\/\/|(?<![\w/.])\/)[^\s"'<>?#]*)[?#][^\s"'<>]*/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
// drizzle's query errors end their message with the bound values (hashes, tokens, addresses,
// free text with newlines): everything up to the stack frames goes.
const QUERY_PARAMS = /\bparams: [\s\S]*?(?=\n\s+at |$)/g;
// Every pattern above needs one of these; text without any (most of it) is returned as is.
const MAY_NEED_SCRUBBING = /[@?#]|bearer|basic|eyJ|params: /i;

/** Masks an address to its first character and domain: `a***@example.com`. */
export function maskEmail(address: string): string {
  return address.replace(EMAIL, "$1***@$2");
}

/**
 * Removes what must never reach a log from free text: full email addresses, the query and
 * fragment of links of any scheme and of absolute paths (verification and reset links carry
 * their tokens there), bearer credentials, JWTs, and the bound parameters query errors quote.
 */
export function scrubText(text: string): string {
  if (!MAY_NEED_SCRUBBING.test(text)) return text;
  return text
    .replace(QUERY_PARAMS, "params: [redacted]")
    .replace(LINK_EXTRAS, "$1")
    .replace(BEARER, "$1 [redacted]")
    .replace(JWT, "[redacted-jwt]")
    .replace(EMAIL, "$1***@$2");
}

/** Deep copy of `value` that is safe to log: secret-named members redacted, strings scrubbed. */
export function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 6) return "[truncated]";
  if (value instanceof Error) {
    return {
      name: value.name,
      message: scrubText(value.message),
      ...(value.stack ? { stack: scrubText(value.stack) } : {}),
      // drizzle wraps D1's own error (the useful part) as the cause.
      ...(value.cause !== undefined ? { cause: scrub(value.cause, depth + 1) } : {}),
    };
  }
  if (value instanceof Headers) return scrub(Object.fromEntries(value), depth + 1);
  if (value instanceof URL) return scrubText(value.href);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) ? "[redacted]" : scrub(item, depth + 1);
  }
  return out;
}

type Sink = (level: LogLevel, line: string) => void;

const consoleSink: Sink = (level, line) => {
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
};

// Methods on a prototype rather than closures per logger: every request makes one (per-request
// cost: bench/README.md, Issue 24).
class JsonLineLogger implements Logger {
  constructor(
    private readonly base: LogFields,
    private readonly sink: Sink,
  ) {}

  debug(msg: string, fields?: LogFields): void {
    this.write("debug", msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.write("info", msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.write("warn", msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.write("error", msg, fields);
  }

  child(fields: LogFields): Logger {
    return new JsonLineLogger({ ...this.base, ...fields }, this.sink);
  }

  private write(level: LogLevel, msg: string, fields?: LogFields): void {
    const ts = new Date().toISOString();
    const members = membersJson(this.base, fields);
    if (members !== null) {
      this.sink(level, `{"ts":"${ts}","level":"${level}","msg":${JSON.stringify(scrubText(msg))}${members}}`);
      return;
    }
    const entry = scrub({ ...this.base, ...fields }) as LogFields;
    this.sink(level, JSON.stringify({ ts, level, msg: scrubText(msg), ...entry }));
  }
}

// Every request writes a line (the access log): its members are written straight into the JSON
// text, without the merged, scrubbed and spread copies of the general path (bench/README.md,
// Issue 24). The text is the same as JSON.stringify of that copy would give.

/** `,"name":` per member name, or null for a secret's name. Names come from the code: few. */
const memberPrefixes = new Map<string, string | null>();
const MAX_MEMBER_PREFIXES = 512;
const REDACTED_JSON = JSON.stringify("[redacted]");
const RESERVED_MEMBERS = new Set(["ts", "level", "msg"]);

function memberPrefix(key: string): string | null {
  let prefix = memberPrefixes.get(key);
  if (prefix === undefined) {
    prefix = SECRET_KEY.test(key) ? null : `,${JSON.stringify(key)}:`;
    if (memberPrefixes.size < MAX_MEMBER_PREFIXES) memberPrefixes.set(key, prefix);
  }
  return prefix;
}

/** One member's JSON text (`,"name":value`), empty where JSON.stringify would leave it out. */
function memberJson(key: string, value: unknown): string {
  const prefix = memberPrefix(key);
  if (prefix === null) return `,${JSON.stringify(key)}:${REDACTED_JSON}`;
  switch (typeof value) {
    case "string":
      return prefix + JSON.stringify(scrubText(value));
    case "number":
    case "boolean":
      return prefix + JSON.stringify(value);
    case "undefined":
    case "function":
    case "symbol":
      return "";
    default: {
      const text = JSON.stringify(scrub(value, 1));
      return text === undefined ? "" : prefix + text;
    }
  }
}

/**
 * The members of `{ ...base, ...fields }` as JSON text after `msg`, or null where that text would
 * not follow the copy's member order (a name in both, a name the line itself uses, an
 * integer-like name, which objects put first): the general path writes those.
 */
function membersJson(base: LogFields, fields: LogFields | undefined): string | null {
  let out = "";
  for (const key in base) {
    if (!Object.hasOwn(base, key) || RESERVED_MEMBERS.has(key) || isIndexLike(key)) return null;
    if (fields !== undefined && Object.hasOwn(fields, key)) return null;
    out += memberJson(key, base[key]);
  }
  if (fields === undefined) return out;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key) || RESERVED_MEMBERS.has(key) || isIndexLike(key)) return null;
    out += memberJson(key, fields[key]);
  }
  return out;
}

function isIndexLike(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57;
}

/** A structured logger writing one JSON object per line; every field passes through `scrub`. */
export function createLogger(base: LogFields = {}, sink: Sink = consoleSink): Logger {
  return new JsonLineLogger(base, sink);
}
