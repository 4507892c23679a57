/** The byte-order mark an export starts with, so spreadsheet programs read the file as UTF-8. */
export const CSV_BOM = "\uFEFF";

// A cell a spreadsheet would read as a formula (or, with a leading tab or carriage return, could
// be made to): OWASP's CSV-injection guard prefixes it with an apostrophe.
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export type CsvValue = string | number | boolean | null | undefined;

/**
 * One cell, RFC 4180: empty for null, numbers as JavaScript prints them, text guarded against
 * formula injection and quoted (inner quotes doubled) when it holds a comma, a quote or a line
 * break. Numbers are never guarded: they are data, and the columns that hold them are positive.
 * NUL characters are left out: CSV readers stop at them or refuse the file, and text written
 * before the service refused control characters may still hold one.
 */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value === "boolean") return value ? "true" : "false";
  const text = value.includes("\u0000") ? value.replaceAll("\u0000", "") : value;
  const guarded = FORMULA_START.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}

/** One record: the cells joined by commas, ended by CRLF as RFC 4180 says. */
export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(",")}\r\n`;
}
