/** A satisfiable byte range of a representation: `offset` and `length` in bytes. */
export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * Reads a `Range` header against a representation of `size` bytes (RFC 9110, 14.1.2): null when
 * there is none or it cannot be honoured as one range (the full body is sent: several ranges or
 * another unit are allowed to be ignored), `"unsatisfiable"` for a single byte range outside the
 * representation (416), otherwise the range, clipped to the end.
 */
export function parseRange(header: string | null | undefined, size: number): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    // bytes=-n: the last n bytes.
    const suffix = Number(last);
    if (suffix === 0) return "unsatisfiable";
    // A non-zero suffix of an empty representation is satisfiable (RFC 9110, 14.1.1) but no 206
    // can express zero bytes: the Range is ignored and the empty representation sent.
    if (size === 0) return null;
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== "" && Number(last) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { offset: start, length: end - start + 1 };
}
