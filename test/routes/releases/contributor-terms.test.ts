import { describe, expect, it } from "vitest";
import { bearer, me, postJson, verifiedUser } from "../../support/accounts";
import { api, apiWithVars, expectProblem, roundTrips } from "../../support/http";

interface Terms {
  current_version: number;
  accepted_version: number | null;
  accepted_at: string | null;
}

const terms = (token: string) => api("/v1/users/me/contributor-terms", { headers: bearer(token) });
const accept = (token: string, body: unknown) => postJson("/v1/users/me/contributor-terms", body, bearer(token));
const withdraw = (token: string) => api("/v1/users/me/contributor-terms", { method: "DELETE", headers: bearer(token) });

describe("contributor terms", () => {
  it("are accepted at the current version, shown on the account, and withdrawn", async () => {
    const user = await verifiedUser("terms");
    const token = user.tokens.access_token;
    const before = (await (await me(token)).json()) as Record<string, unknown>;
    expect(before).toMatchObject({ terms_accepted_version: null, terms_accepted_at: null });
    expect((await (await terms(token)).json()) as Terms).toEqual({ current_version: 1, accepted_version: null, accepted_at: null });

    const accepted = await accept(token, { version: 1 });
    expect(accepted.status).toBe(200);
    // The token check and the one conditional update.
    expect(roundTrips(accepted)).toBe(2);
    const account = (await accepted.json()) as { id: number; terms_accepted_version: number; terms_accepted_at: string };
    expect(account.id).toBe(user.id);
    expect(account.terms_accepted_version).toBe(1);
    expect(account.terms_accepted_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(await (await me(token)).json()).toMatchObject({ terms_accepted_version: 1, terms_accepted_at: account.terms_accepted_at });
    expect(await (await terms(token)).json()).toEqual({ current_version: 1, accepted_version: 1, accepted_at: account.terms_accepted_at });

    const removed = await withdraw(token);
    expect(removed.status).toBe(204);
    expect(roundTrips(removed)).toBe(2);
    expect(await (await me(token)).json()).toMatchObject({ terms_accepted_version: null, terms_accepted_at: null });
    // Withdrawing again is the same answer.
    expect((await withdraw(token)).status).toBe(204);
  });

  it("accepting the version already accepted keeps the first time", async () => {
    const user = await verifiedUser("terms2");
    const token = user.tokens.access_token;
    const first = (await (await accept(token, { version: 1 })).json()) as { terms_accepted_at: string };
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = (await (await accept(token, { version: 1 })).json()) as { terms_accepted_at: string };
    expect(second.terms_accepted_at).toBe(first.terms_accepted_at);
  });

  it("refuses any version but the current one, and malformed bodies, with 422 at /version", async () => {
    const user = await verifiedUser("terms3");
    const token = user.tokens.access_token;
    for (const body of [{ version: 2 }, { version: 0 }, { version: "1" }, { version: 1.5 }, {}, { version: 1, extra: true }]) {
      const problem = await expectProblem(await accept(token, body), 422, "VALIDATION_FAILED");
      expect(problem.errors?.length, JSON.stringify(body)).toBeGreaterThan(0);
    }
    const wrong = await expectProblem(await accept(token, { version: 2 }), 422, "VALIDATION_FAILED");
    expect(wrong.errors).toEqual([{ pointer: "/version", detail: "The current contributor terms are version 1; accept that version." }]);
    expect(await (await me(token)).json()).toMatchObject({ terms_accepted_version: null });
  });

  it("takes the current version from CONTRIBUTOR_TERMS_VERSION", async () => {
    const user = await verifiedUser("terms4");
    const headers = { ...bearer(user.tokens.access_token), "content-type": "application/json" };
    const vars = { CONTRIBUTOR_TERMS_VERSION: "3" };
    await expectProblem(
      await apiWithVars(vars, "/v1/users/me/contributor-terms", { method: "POST", headers, body: '{"version":1}' }),
      422,
      "VALIDATION_FAILED",
    );
    const accepted = await apiWithVars(vars, "/v1/users/me/contributor-terms", { method: "POST", headers, body: '{"version":3}' });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ terms_accepted_version: 3 });
  });

  it("needs a signed-in caller", async () => {
    await expectProblem(await api("/v1/users/me/contributor-terms"), 401, "AUTHENTICATION_REQUIRED");
    await expectProblem(await postJson("/v1/users/me/contributor-terms", { version: 1 }), 401, "AUTHENTICATION_REQUIRED");
    await expectProblem(await api("/v1/users/me/contributor-terms", { method: "DELETE" }), 401, "AUTHENTICATION_REQUIRED");
  });
});
