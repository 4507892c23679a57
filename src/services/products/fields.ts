import { storedJsonObject } from "../../lib/json-bounds";

/** The units a bill-of-materials quantity may be given in (the `units` table holds the same codes). */
export const UNIT_CODES = ["kg", "g", "m", "cm"] as const;
export type UnitCode = (typeof UNIT_CODES)[number];

const CIRCULARITY_KEYS = ["recyclability", "disassemblability", "remanufacturability"] as const;

type Circularity = Partial<Record<(typeof CIRCULARITY_KEYS)[number], string | null>> | null | undefined;

/** The fields a base product and a component share, as a client writes them (create and PATCH bodies). */
export interface RecordFields {
  name: string;
  description?: string | null;
  brand?: string | null;
  model?: string | null;
  weight_g?: number | null;
  height_cm?: number | null;
  width_cm?: number | null;
  depth_cm?: number | null;
  circularity_properties?: Circularity;
  product_type_id?: number | null;
}

/**
 * The stored form of `circularity_properties`: compact JSON of the three named notes, each
 * trimmed; empty strings and an object left empty become null (spec, Base product and component).
 */
export function normalizeCircularity(value: Circularity): string | null {
  if (!value) return null;
  const kept: Record<string, string> = {};
  for (const key of CIRCULARITY_KEYS) {
    const note = value[key]?.trim();
    if (note) kept[key] = note;
  }
  return Object.keys(kept).length > 0 ? JSON.stringify(kept) : null;
}

/** Brands are stored lower-case so that filters and facets group spellings together; blank is null. */
export function normalizeBrand(value: string | null | undefined): string | null {
  const brand = value?.trim().toLowerCase();
  return brand ? brand : null;
}

/** The API form of stored circularity notes: every named member present, null when absent. */
export function circularityOut(stored: string | null): Record<(typeof CIRCULARITY_KEYS)[number], string | null> | null {
  // Only the service writes this column, but a read must not fail on whatever it holds.
  const parsed = storedJsonObject(stored);
  if (!parsed) return null;
  const note = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    recyclability: note(parsed.recyclability),
    disassemblability: note(parsed.disassemblability),
    remanufacturability: note(parsed.remanufacturability),
  };
}
