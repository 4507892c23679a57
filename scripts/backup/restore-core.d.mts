// Types for scripts/backup/restore-core.mjs (the restore drill test imports it).

export const BACKUP_FORMAT: string;
export const BACKUP_FORMAT_1: string;

export interface SchemaEntry {
  type: "table" | "index" | "trigger" | "view";
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** A file of the backup. */
export interface ManifestFile {
  name: string;
  file: string;
  rows: number;
  bytes: number;
  sha256: string;
  members: number[];
}

export interface ManifestTable extends ManifestFile {
  columns: string[];
  rowid: boolean;
}

/** A full-text index over another table's content; `rows` is how many rows of it the index holds. */
export interface ManifestIndex extends ManifestFile {
  columns: string[];
  content: string;
  content_rowid: string;
  /** The shadow table the rowids were read from (and the restore counts). */
  source: string;
}

export interface Manifest {
  format: string;
  id: string;
  started_at: string;
  finished_at: string;
  read_generations: { at_start: Record<string, string>; at_end: Record<string, string> | null; changed: boolean } | null;
  schema: SchemaEntry[];
  shadow: string[];
  /** Format /1 only (else empty): indexes the restore rebuilds from all of their content. */
  rebuild: string[];
  tables: ManifestTable[];
  /** Format /2 (empty for /1). */
  indexes: ManifestIndex[];
}

export interface RestorePlan {
  head: string[];
  tables: { name: string; text: string }[];
  tail: string[];
  fills: { name: string; text: string }[];
  sequenceReset: boolean;
}

export function parseManifest(text: string): Manifest;
export function backupFiles(manifest: Manifest): ManifestFile[];
export function fillPrefix(index: ManifestIndex): string;
export function verifyFile(table: ManifestFile, bytes: Uint8Array): Promise<void>;
export function tableText(table: ManifestFile, bytes: Uint8Array): Promise<string>;
export function restorePlan(manifest: Manifest, texts: Map<string, string>): RestorePlan;
export function restoreSql(plan: RestorePlan): string;
export function splitStatements(text: string): string[];
export function restoreStatements(plan: RestorePlan): string[];
export function countQuery(manifest: Manifest): string;
export function countMismatches(manifest: Manifest, counts: Record<string, unknown>): { name: string; expected: number; found: unknown }[];
export const EXISTING_TABLES_QUERY: string;
