// Types for scripts/budget/budget-core.mjs (its test imports it).
export function startupBusyMs(profile: unknown): number;
export function uploadSizes(output: string): { uploadKib: number; gzipKib: number };
export function overBudget(
  measured: { startupMs: number; gzipKib: number },
  budgets: { startup_ms: number; bundle_gzip_kib: number },
): { name: string; measured: number; budget: number }[];
