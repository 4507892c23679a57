import { env } from "cloudflare:workers";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { createLogger } from "../../src/lib/logger";
import { ensureBootstrapSuperuser } from "../../src/services/accounts/bootstrap";

// The Worker creates the bootstrap superuser on an isolate's first request and then remembers it
// did (src/middleware/bootstrap.ts). In a runtime shared by many files that happened for an
// earlier file's database, so each file's fresh database gets it here, from the same service.
await ensureBootstrapSuperuser({ db: createDb(env.DB).db, config: loadConfig(env), log: createLogger({}, () => {}) });
