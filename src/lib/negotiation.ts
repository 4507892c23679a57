/**
 * Proactive content negotiation on the `Accept` header (RFC 9110, section 12.5.1): media ranges
 * with quality values, the most specific range that matches a type deciding its quality, and the
 * server's order breaking ties. Pure: used by the release routes and the read cache's keys alike,
 * so both agree on which representation a request gets.
 */

/** The representations of a release, in the server's order of preference (the first is the default). */
export const RELEASE_MEDIA_TYPES = [
  "application/json",
  "text/html",
  "application/ld+json",
  "application/vnd.datacite.datacite+json",
  "application/vnd.citationstyles.csl+json",
  "application/x-bibtex",
  "application/x-research-info-systems",
  "text/x-bibliography",
] as const;

export type ReleaseMediaType = (typeof RELEASE_MEDIA_TYPES)[number];

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The ranges of an Accept header; a malformed range is skipped (as if it were not there). */
function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(",")) {
    const [range, ...parameters] = part.split(";");
    const [type, subtype, extra] = (range ?? "").trim().toLowerCase().split("/");
    if (type === undefined || subtype === undefined || extra !== undefined || !TOKEN.test(type) || !TOKEN.test(subtype)) continue;
    if (type === "*" && subtype !== "*") continue;
    let q = 1;
    for (const parameter of parameters) {
      const [name, value] = parameter.split("=").map((piece) => piece.trim());
      if (name?.toLowerCase() !== "q") continue;
      // RFC 9110: 0 to 1 with at most three decimals; anything else makes the range unusable.
      q = value !== undefined && /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value) ? Number(value) : Number.NaN;
    }
    if (!Number.isNaN(q)) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The quality the ranges give `mediaType`: that of the most specific range matching it, 0 when none does. */
function qualityOf(ranges: readonly MediaRange[], mediaType: string): number {
  const [type, subtype] = mediaType.split("/");
  let best: { specificity: number; q: number } | null = null;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === "*" ? 1 : range.type === "*" ? 0 : -1;
    if (specificity < 0) continue;
    if (best === null || specificity > best.specificity) best = { specificity, q: range.q };
  }
  return best?.q ?? 0;
}

/**
 * The type among `offered` that `accept` prefers: the highest quality above 0, ties going to the
 * earlier offer. No header, or one without a usable range, is `*\/*`: the first offer. Null when
 * the header accepts none of them (the caller answers 406).
 */
export function negotiate<T extends string>(accept: string | null | undefined, offered: readonly T[]): T | null {
  if (accept === null || accept === undefined || accept.trim() === "") return offered[0] ?? null;
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return offered[0] ?? null;
  let chosen: T | null = null;
  let chosenQ = 0;
  for (const mediaType of offered) {
    const q = qualityOf(ranges, mediaType);
    if (q > chosenQ) {
      chosen = mediaType;
      chosenQ = q;
    }
  }
  return chosen;
}

/** The representation of a release an Accept header asks for; null: none of them (406). */
export function negotiateRelease(accept: string | null | undefined): ReleaseMediaType | null {
  return negotiate(accept, RELEASE_MEDIA_TYPES);
}
