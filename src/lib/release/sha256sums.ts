/** One file a checksum list names. */
export interface ChecksumEntry {
  readonly path: string;
  /** Lower-case hex SHA-256. */
  readonly sha256: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * `SHA256SUMS` in the format `sha256sum` writes and `sha256sum -c` checks: `<hex>  <path>` per
 * line (two spaces: text mode), sorted by path so the same files always give the same bytes.
 * A path with a backslash or a line break would need GNU's escaped form, which other checkers
 * do not read: it is refused, as are duplicates and absolute paths.
 */
export function sha256sums(entries: readonly ChecksumEntry[]): string {
  const seen = new Set<string>();
  for (const { path, sha256 } of entries) {
    if (!HEX64.test(sha256)) throw new Error(`the SHA-256 of "${path}" is not 64 lower-case hex digits`);
    if (path === "" || path.startsWith("/") || /[\\\r\n]/.test(path)) throw new Error(`"${path}" cannot be listed`);
    if (seen.has(path)) throw new Error(`"${path}" is listed twice`);
    seen.add(path);
  }
  return [...entries]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map(({ path, sha256 }) => `${sha256}  ${path}\n`)
    .join("");
}
