/**
 * What a virtual table was declared with, read from the `CREATE VIRTUAL TABLE` text SQLite keeps in
 * `sqlite_master`, and the options of an FTS5 one. The backup needs an FTS5 index's `content`,
 * `content_rowid` and `columnsize`, which no pragma reports; SQLite keeps only the statement.
 * The reading follows SQLite's own: the arguments are split at commas outside quotes and
 * parentheses, and each FTS5 argument is `bareword = value` (an option) or a column name, a
 * value being a bareword or a quoted string ('', "", `` or [] quotes, a quote doubled inside).
 * Text it cannot read is an error rather than a guess.
 */

export class DeclarationError extends Error {
  override name = "DeclarationError";
}

export interface VirtualTableDeclaration {
  /** The module, as written (SQLite compares module names without regard to case). */
  readonly module: string;
  /** Each argument's text, trimmed. */
  readonly args: readonly string[];
}

export interface Fts5Declaration {
  readonly columns: readonly string[];
  /** Options by lower-case name, values unquoted. */
  readonly options: ReadonlyMap<string, string>;
}

const CLOSING: Record<string, string> = { "'": "'", '"': '"', "`": "`", "[": "]" };

/** The index just past the quoted text that opens at `start`, or -1 when it never closes. */
function endOfQuoted(text: string, start: number): number {
  const close = CLOSING[text[start]!]!;
  let i = start + 1;
  for (;;) {
    const at = text.indexOf(close, i);
    if (at === -1) return -1;
    // A doubled quote stands for one, inside the string (brackets have no escape).
    if (close !== "]" && text[at + 1] === close) i = at + 2;
    else return at + 1;
  }
}

/** The index just past a comment that opens at `i`, `i` itself when none does. */
function skipComment(text: string, i: number): number {
  if (text.startsWith("--", i)) {
    const end = text.indexOf("\n", i);
    return end === -1 ? text.length : end + 1;
  }
  if (text.startsWith("/*", i)) {
    const end = text.indexOf("*/", i + 2);
    return end === -1 ? text.length : end + 2;
  }
  return i;
}

/** A name or value as SQLite reads it: its quotes removed, a doubled quote inside made one. */
export function unquote(word: string): string {
  const close = CLOSING[word[0]!];
  if (!close) return word;
  const inner = word.slice(1, -1);
  return close === "]" ? inner : inner.replaceAll(close + close, close);
}

const isWordChar = (c: string) => /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) >= 0x80;

/** The module and arguments of a `CREATE VIRTUAL TABLE` statement; null for any other statement. */
export function virtualTableDeclaration(sql: string): VirtualTableDeclaration | null {
  if (!/^\s*CREATE\s+VIRTUAL\s+TABLE\s/i.test(sql)) return null;
  // The words before the argument list, outside quotes and comments: ... USING module (
  const words: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const after = skipComment(sql, i);
    if (after !== i) i = after;
    else if (/\s/.test(c)) i++;
    else if (c in CLOSING) {
      const end = endOfQuoted(sql, i);
      if (end === -1) throw new DeclarationError("a quoted name never closes");
      words.push(unquote(sql.slice(i, end)));
      i = end;
    } else if (isWordChar(c)) {
      const start = i;
      while (i < sql.length && isWordChar(sql[i]!)) i++;
      words.push(sql.slice(start, i));
    } else if (c === "(") break;
    else i++;
  }
  const using = words.findLastIndex((word) => word.toUpperCase() === "USING");
  if (using === -1 || using !== words.length - 2) throw new DeclarationError("no USING module");
  const module = words[using + 1]!;
  if (i >= sql.length) return { module, args: [] };
  // Each argument's text without comments (SQLite hands a module its arguments from their first token to their last).
  const args: string[] = [];
  let depth = 0;
  let current = "";
  i++;
  while (i < sql.length) {
    const c = sql[i]!;
    const after = skipComment(sql, i);
    if (after !== i) {
      current += " ";
      i = after;
      continue;
    }
    if (c in CLOSING) {
      const end = endOfQuoted(sql, i);
      if (end === -1) throw new DeclarationError("a quoted argument never closes");
      current += sql.slice(i, end);
      i = end;
      continue;
    }
    if ((c === "," || c === ")") && depth === 0) {
      args.push(current.trim());
      if (c === ")") return { module, args: args.length === 1 && args[0] === "" ? [] : args };
      current = "";
    } else {
      if (c === "(") depth++;
      else if (c === ")") depth--;
      current += c;
    }
    i++;
  }
  throw new DeclarationError("the argument list never closes");
}

/** One word of an FTS5 argument from `i`: `[word, index past it, whether it was quoted]`. */
function fts5Word(arg: string, i: number): [string, number, boolean] {
  if (arg[i]! in CLOSING) {
    const end = endOfQuoted(arg, i);
    if (end === -1) throw new DeclarationError(`unclosed quote in ${JSON.stringify(arg)}`);
    return [unquote(arg.slice(i, end)), end, true];
  }
  let end = i;
  while (end < arg.length && (/[A-Za-z0-9_]/.test(arg[end]!) || arg.charCodeAt(end) >= 0x80)) end++;
  if (end === i) throw new DeclarationError(`cannot read ${JSON.stringify(arg)}`);
  return [arg.slice(i, end), end, false];
}

const skipSpaces = (arg: string, i: number) => {
  while (i < arg.length && /\s/.test(arg[i]!)) i++;
  return i;
};

/** The columns and options of an FTS5 table's arguments. */
export function fts5Declaration(args: readonly string[]): Fts5Declaration {
  const columns: string[] = [];
  const options = new Map<string, string>();
  for (const arg of args) {
    const [first, afterFirst, quoted] = fts5Word(arg, skipSpaces(arg, 0));
    let i = skipSpaces(arg, afterFirst);
    if (arg[i] === "=") {
      // FTS5 takes a quoted first word for a column name, never an option's.
      if (quoted) throw new DeclarationError(`cannot read ${JSON.stringify(arg)}`);
      const [value, end] = fts5Word(arg, skipSpaces(arg, i + 1));
      if (skipSpaces(arg, end) !== arg.length) throw new DeclarationError(`cannot read ${JSON.stringify(arg)}`);
      options.set(first.toLowerCase(), value);
      continue;
    }
    // A column: its name, then at most one more word (UNINDEXED).
    if (i < arg.length) {
      const [, end] = fts5Word(arg, i);
      i = skipSpaces(arg, end);
      if (i !== arg.length) throw new DeclarationError(`cannot read ${JSON.stringify(arg)}`);
    }
    columns.push(first);
  }
  return { columns, options };
}
