import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, verifiedUser } from "../../support/accounts";
import { api } from "../../support/http";
import { bootstrapAdmin, enrolTotp } from "../../support/mfa";

// In a file of its own: one of the two superusers is deleted, and storage is per file.

const deleteMe = (token: string, body: object) =>
  api("/v1/users/me", { method: "DELETE", headers: { ...bearer(token), "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the last-superuser guard under concurrency", () => {
  it("two superusers deleting themselves at once: one goes, the other is then the last and stays (409)", async () => {
    const admin = await bootstrapAdmin();
    const second = await verifiedUser("super");
    // No route makes a superuser (bootstrap configuration does); the state is set directly here.
    await env.DB.prepare("UPDATE users SET is_superuser = 1, role = 'lab' WHERE id = ?").bind(second.id).run();
    const enrolled = await enrolTotp(second.tokens.access_token, second.password);
    const responses = await Promise.all([
      deleteMe(admin.tokens.access_token, { current_password: admin.password, mfa_code: admin.authenticator.next() }),
      deleteMe(enrolled.tokens.access_token, { current_password: second.password, mfa_code: enrolled.authenticator.next() }),
    ]);
    expect(responses.map((response) => response.status).sort()).toEqual([204, 409]);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE is_superuser = 1 AND is_active = 1").first();
    expect(left).toEqual({ n: 1 });
  });
});
