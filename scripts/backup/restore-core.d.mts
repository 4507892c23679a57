// Types for scripts/backup/restore-core.mjs (the restore drill test imports it).

export const BACKUP_FORMAT: string;

export interface SchemaEntry {
  type: "table" | "index" | "trigger" | "view";
  name: string;
  tbl_name: string;
  sql: string | null;
}

export interface ManifestTable {
  name: string;
  columns: string[];
  rowid: boolean;
  file: string;
  rows: number;
  bytes: number;
  sha256: string;
  members: number[];
}

export interface Manifest {
  format: string;
  id: string;
  started_at: string;
  finished_at: string;
  read_generations: { at_start: Record<string, string>; at_end: Record<string, string> | null; changed: boolean } | null;
  schema: SchemaEntry[];
  shadow: string[];
  rebuild: string[];
  tables: ManifestTable[];
}

export interface RestorePlan {
  head: string[];
  tables: { name: string; text: string }[];
  tail: string[];
  sequenceReset: boolean;
}

export function parseManifest(text: string): Manifest;
export function verifyFile(table: ManifestTable, bytes: Uint8Array): Promise<void>;
export function tableText(table: ManifestTable, bytes: Uint8Array): Promise<string>;
export function restorePlan(manifest: Manifest, texts: Map<string, string>): RestorePlan;
export function restoreSql(plan: RestorePlan): string;
export function splitStatements(text: string): string[];
export function restoreStatements(plan: RestorePlan): string[];
export function countQuery(manifest: Manifest): string;
export function countMismatches(manifest: Manifest, counts: Record<string, unknown>): { name: string; expected: number; found: unknown }[];
export const EXISTING_TABLES_QUERY: string;
