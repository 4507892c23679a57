import { freshStorage } from "../support/fresh-storage";

// Runs before each test file of the workers projects: files share one runtime (vitest.config.ts),
// so each starts on wiped, migrated storage.
await freshStorage();
