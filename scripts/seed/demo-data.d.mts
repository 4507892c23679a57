// Types for scripts/seed/demo-data.mjs, which the Workers tests import.

export const DEMO_ACCOUNT: { username: string; email: string };
export const DEMO_ANCHOR: number;
export const DEMO_COUNTS_QUERY: string;

export interface DemoRecord {
  /** Index of the parent record in `records`; null for a base product. */
  parent: number | null;
  amount: number | null;
  depth: number;
  name: string;
  description?: string;
  brand?: string;
  model?: string;
  weight_g: number;
  height_cm?: number;
  width_cm?: number;
  depth_cm?: number;
  circularity?: string | null;
  type?: string;
  created: number;
}

export interface DemoBomEntry {
  /** Index of the record in `records`. */
  record: number;
  material: string;
  quantity: number;
  unit: "kg" | "g";
}

export const TEMPLATES: { type: string; noun: string }[];
export function prng(seed: number): () => number;
export function checkTemplates(materialNames: readonly string[], typeNames: readonly string[]): string[];
export function generateDemo(count: number, seed?: number): { records: DemoRecord[]; bom: DemoBomEntry[] };
export function demoStatements(options: { products: number; seed?: number; reset?: boolean; maxStatementChars?: number }): string[];
