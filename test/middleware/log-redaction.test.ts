import { afterEach, describe, expect, it } from "vitest";
import { api } from "../support/http";
import { captureLogs } from "../support/logs";

// Each secret below is put where the service really logs something: the email sender logs the
// recipient and subject, the access log the path, the error handler whole exceptions.
describe("log lines never contain secrets", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("an email's recipient, and an address and reset link inside its subject", async () => {
    await api("/live"); // bootstrap first, so only the request under test is captured
    const recipient = "victim.person@example.org";
    const resetUrl = "https://app.relab.example/reset-password#token=reset-token-abcdef123456";
    const nativeLink = "relab://login#status=mfa_required&mfa_handoff=handoff-secret-42";
    logs = captureLogs();

    const response = await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        to: recipient,
        subject: `For jörg.müller@exämple.de: ${resetUrl} or ${nativeLink}`,
        text: "body",
      }),
    });
    expect(response.status).toBe(204);

    const sent = logs.entries().find((entry) => entry.msg === "email kept in the development outbox");
    expect(sent).toMatchObject({
      to: "v***@example.org",
      subject: "For j***@exämple.de: https://app.relab.example/reset-password or relab://login",
    });
    const output = logs.lines.join("\n");
    for (const secret of [recipient, "jörg.müller", "reset-token-abcdef123456", "handoff-secret-42", resetUrl]) {
      expect(output).not.toContain(secret);
    }
  });

  it("a request's query string, bearer token and cookies", async () => {
    const secrets = {
      bearer: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLXNlY3JldA",
      cookie: "refresh-cookie-secret-value",
      queryToken: "query-token-987654",
      email: "someone.else@example.org",
    };
    logs = captureLogs();
    await api(`/__dev/outbox?to=${encodeURIComponent(secrets.email)}&token=${secrets.queryToken}`, {
      headers: { Authorization: `Bearer ${secrets.bearer}`, Cookie: `__Host-relab-refresh=${secrets.cookie}` },
    });
    expect(logs.entries().at(-1)).toMatchObject({ msg: "request", path: "/__dev/outbox" });
    const output = logs.lines.join("\n");
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret);
  });
});
