import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BREACH_CHECK_TIMEOUT_MS, isBreachedPassword } from "../../src/auth/breached-passwords";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/lib/logger";
import { PWNED } from "../support/fake-upstream-config";

const config = loadConfig(env);

function recordingLogger() {
  const lines: { level: string; line: string }[] = [];
  return { log: createLogger({}, (level, line) => lines.push({ level, line })), lines };
}

describe("isBreachedPassword (k-anonymity range check)", () => {
  it("finds a breached password", async () => {
    const { log, lines } = recordingLogger();
    expect(await isBreachedPassword(config, log, PWNED.breached)).toBe(true);
    expect(lines).toEqual([]);
  });

  it("does not find an ordinary password (only padding in its range)", async () => {
    const { log, lines } = recordingLogger();
    expect(await isBreachedPassword(config, log, "violet-harbour-seventeen")).toBe(false);
    expect(lines).toEqual([]);
  });

  it("passes, with a warning, when the service answers an error", async () => {
    const { log, lines } = recordingLogger();
    expect(await isBreachedPassword(config, log, PWNED.down)).toBe(false);
    expect(lines).toEqual([{ level: "warn", line: expect.stringContaining("status 503") }]);
  });

  it("passes, with a warning, once the service is slower than the time-out", async () => {
    const { log, lines } = recordingLogger();
    const started = Date.now();
    expect(await isBreachedPassword(config, log, PWNED.slow)).toBe(false);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(BREACH_CHECK_TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(2_900); // the fake hangs for 3 s
    expect(lines).toEqual([{ level: "warn", line: expect.stringContaining("breached-password check skipped") }]);
  });
});
