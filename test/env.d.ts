// Test-only bindings, added in vitest.config.ts (this file is deliberately not a module).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
