// Types for scripts/lib/local-d1.mjs (a Node test imports it).
export interface LocalState {
  all(sql: string): Promise<Record<string, unknown>[]>;
  batch(statements: string[]): Promise<number>;
  object(key: string): Promise<Buffer | null>;
  dispose(): Promise<void>;
}
export function openLocalState(persistTo: string, options?: { binding?: string; bucket?: string | null }): Promise<LocalState>;
