import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { createLogger, type LogLevel } from "../../src/lib/logger";
import { ensureBootstrapSuperuser } from "../../src/services/accounts/bootstrap";
import { startAsNewIsolate } from "../support/new-isolate";

// What an isolate does on its first request: a first request again in the shared runtime.
await startAsNewIsolate();

describe("ensureBootstrapSuperuser", () => {
  it("settles a race between two isolates: one creates, the other finds it, nobody logs an error", async () => {
    const levels: LogLevel[] = [];
    const log = createLogger({}, (level) => levels.push(level));
    const config = loadConfig(env);
    const outcomes = await Promise.all([
      ensureBootstrapSuperuser({ db: createDb(env.DB).db, config, log }),
      ensureBootstrapSuperuser({ db: createDb(env.DB).db, config, log }),
    ]);
    expect(outcomes.sort()).toEqual(["created", "exists"]);
    expect(levels).toEqual(["info"]);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE is_superuser = 1").first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it("does nothing when no bootstrap account is configured", async () => {
    const config = loadConfig({ ...env, BOOTSTRAP_SUPERUSER_EMAIL: "" });
    expect(await ensureBootstrapSuperuser({ db: createDb(env.DB).db, config, log: createLogger({}, () => {}) })).toBe("disabled");
  });
});
