import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { api } from "../support/http";
import { captureLogs } from "../support/logs";
import { startAsNewIsolate } from "../support/new-isolate";

// What an isolate does on its first request: a first request again in the shared runtime.
await startAsNewIsolate();

describe("bootstrap superuser when its address is already taken", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("does not promote the ordinary account, and says so in the log", async () => {
    await env.DB.prepare("INSERT INTO users (email, email_canonical, username, hashed_password) VALUES (?1, ?1, 'squatter', NULL)")
      .bind(env.BOOTSTRAP_SUPERUSER_EMAIL)
      .run();
    logs = captureLogs();

    expect((await api("/v1/units")).status).toBe(200);

    const superusers = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE is_superuser = 1").first<{ n: number }>();
    expect(superusers?.n).toBe(0);
    const squatter = await env.DB.prepare("SELECT role, is_verified FROM users WHERE username = 'squatter'").first();
    expect(squatter).toEqual({ role: "contributor", is_verified: 0 });
    expect(logs.entries().some((entry) => entry.level === "error" && String(entry.msg).startsWith("bootstrap superuser not created"))).toBe(
      true,
    );
    expect(logs.lines.join("\n")).not.toContain(env.BOOTSTRAP_SUPERUSER_EMAIL);
  });
});
