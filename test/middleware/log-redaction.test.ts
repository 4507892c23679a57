import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { api } from "../support/http";
import { captureLogs } from "../support/logs";

// Secrets put into every part of requests the service logs about; none may reach a log line.
describe("log lines never contain secrets", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("across requests carrying tokens, cookies, passwords, emails and reset links", async () => {
    const secrets = {
      bearer: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLXNlY3JldA",
      cookie: "refresh-cookie-secret-value",
      email: "victim.person@example.org",
      resetToken: "reset-token-abcdef123456",
      password: env.BOOTSTRAP_SUPERUSER_PASSWORD,
    };
    const resetUrl = `https://app.relab.example/reset-password#token=${secrets.resetToken}`;
    logs = captureLogs();

    await api(`/__dev/outbox?to=${encodeURIComponent(secrets.email)}&token=${secrets.resetToken}`, {
      headers: {
        Authorization: `Bearer ${secrets.bearer}`,
        Cookie: `__Host-relab-refresh=${secrets.cookie}`,
      },
    });
    await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${secrets.bearer}` },
      body: JSON.stringify({
        to: secrets.email,
        subject: "Reset your password",
        text: `Open ${resetUrl} to choose a new password.`,
      }),
    });
    // The bootstrap run (first request of this file) handles the superuser password.
    await api("/v1/units");

    const output = logs.lines.join("\n");
    expect(logs.lines.length).toBeGreaterThanOrEqual(4);
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
    expect(output).not.toContain(resetUrl);
    expect(output).not.toContain(env.BOOTSTRAP_SUPERUSER_EMAIL);
    expect(output).toContain("v***@example.org");
  });
});
