import { describe, expect, it } from "vitest";
import { bearer, bearerLogin, postJson, registerUser } from "../../support/accounts";
import { api } from "../../support/http";
import { captureLogs } from "../../support/logs";

describe("audit records of auth events", () => {
  it("logs login success and failure, logout and revoke-all without secrets or full addresses", async () => {
    const user = await registerUser();
    const logs = captureLogs();
    try {
      const pair = await bearerLogin(user);
      await postJson("/v1/auth/bearer/login", { username: user.email, password: "wrong-password-here" });
      await postJson("/v1/auth/bearer/login", { username: "ghost.person@example.org", password: user.password });
      await postJson("/v1/auth/bearer/logout", { refresh_token: pair.refresh_token });
      const second = await bearerLogin(user);
      await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(second.access_token) });

      const audits = logs.entries().filter((entry) => entry.msg === "audit");
      expect(audits.map((entry) => [entry.event, entry.reason ?? null])).toEqual([
        ["auth.login.succeeded", null],
        ["auth.login.failed", "wrong_password"],
        ["auth.login.failed", "unknown_account"],
        ["auth.logout", null],
        ["auth.login.succeeded", null],
        ["auth.sessions.revoked", "revoke_all"],
      ]);
      expect(audits.filter((entry) => entry.user_id !== null).every((entry) => entry.user_id === user.id)).toBe(true);
      expect(audits[2]).toMatchObject({ account: "g***@example.org", user_id: null });
      expect(audits.every((entry) => typeof entry.request_id === "string")).toBe(true);

      const everything = logs.lines.join("\n");
      for (const secret of [
        user.password,
        pair.access_token,
        pair.refresh_token,
        second.access_token,
        user.email,
        "ghost.person@example.org",
      ]) {
        expect(everything).not.toContain(secret);
      }
    } finally {
      logs.restore();
    }
  });
});
