// Test-only bindings, added in vitest.config.ts (this file is deliberately not a module).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** Empty databases beside DB, for the restore drill. */
    RESTORE_DB: D1Database;
    RESTORE_DB_2: D1Database;
  }
}
