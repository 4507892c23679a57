import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { signAccessToken } from "../../../src/auth/tokens";
import { loadConfig } from "../../../src/config";
import worker from "../../../src/index";
import { ownerPseudonym, pseudonymKey } from "../../../src/lib/release/pseudonym";
import { bearer, verifiedUser } from "../../support/accounts";
import { apiWithVars, expectProblem } from "../../support/http";
import { awayFromStepEnd, enrolTotp } from "../../support/mfa";
import { linkProvider, profile } from "../../support/oauth";

// Rotating AUTH_TOKEN_SECRET and DATA_ENCRYPTION_KEY without downtime (decisions.md, Key rotation;
// docs/operations.md). The suite runs with TEST_VARS' secrets; a request "after the rotation" is
// the same Worker with other secrets (apiWithVars), as a deploy with new secrets would be.

const OLD_SECRET = env.AUTH_TOKEN_SECRET;
const NEW_SECRET = "rotated-token-secret-0123456789abcdef0123456789abcdef";
const KEY_0 = env.DATA_ENCRYPTION_KEY;
const KEY_1 = "1f".repeat(32);

/** The secrets of each stage of a data-key rotation. */
const ROTATING = { DATA_ENCRYPTION_KEYS: `1:${KEY_1}` }; // key 1 seals, DATA_ENCRYPTION_KEY is still key 0
const RETIRED = { DATA_ENCRYPTION_KEY: "", DATA_ENCRYPTION_KEYS: `1:${KEY_1}`, PSEUDONYM_KEY: KEY_0 };

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

async function runScheduled(vars: Record<string, string>) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
}

async function sealedOf(userId: number) {
  const user = await env.DB.prepare("SELECT totp_secret FROM users WHERE id = ?").bind(userId).first<{ totp_secret: string | null }>();
  const links = await env.DB.prepare("SELECT access_token_sealed AS a, refresh_token_sealed AS r FROM oauth_accounts WHERE user_id = ?")
    .bind(userId)
    .all<{ a: string | null; r: string | null }>();
  return { totp: user?.totp_secret ?? null, links: links.results };
}

/** Password login then the challenge, under `vars`; returns the challenge's response. */
async function challenge(vars: Record<string, string>, identity: { email: string; password: string }, code: string) {
  const login = await apiWithVars(vars, "/v1/auth/bearer/login", json({ username: identity.email, password: identity.password }));
  expect(login.status, await login.clone().text()).toBe(202);
  const { mfa_token } = (await login.json()) as { mfa_token: string };
  return apiWithVars(vars, "/v1/auth/mfa/challenge", json({ mfa_token, code }));
}

describe("AUTH_TOKEN_SECRET rotation", () => {
  it("keeps an access token of the previous secret valid while AUTH_TOKEN_SECRET_PREVIOUS is set, and refuses it without", async () => {
    const user = await verifiedUser("rot-token");
    const auth = bearer(user.tokens.access_token);
    const rotating = { AUTH_TOKEN_SECRET: NEW_SECRET, AUTH_TOKEN_SECRET_PREVIOUS: OLD_SECRET };
    expect((await apiWithVars(rotating, "/v1/users/me", { headers: auth })).status).toBe(200);
    await expectProblem(await apiWithVars({ AUTH_TOKEN_SECRET: NEW_SECRET }, "/v1/users/me", { headers: auth }), 401, "INVALID_TOKEN");

    // Refreshing during the window hands out a token of the new secret: nobody is signed out.
    const refreshed = await apiWithVars(rotating, "/v1/auth/bearer/refresh", json({ refresh_token: user.tokens.refresh_token }));
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    const { access_token } = (await refreshed.json()) as { access_token: string };
    expect((await apiWithVars({ AUTH_TOKEN_SECRET: NEW_SECRET }, "/v1/users/me", { headers: bearer(access_token) })).status).toBe(200);
  });

  it("refuses a token of the previous secret after its window (expired), while the secret is still set", async () => {
    const user = await verifiedUser("rot-expired");
    const { sid } = decodeJwt(user.tokens.access_token) as { sid: string };
    const now = Math.floor(Date.now() / 1000);
    const expired = await signAccessToken(OLD_SECRET, {
      userId: user.id,
      sessionId: sid,
      issuedAtMs: (now - 901) * 1000,
      expiresAt: now - 1,
    });
    const rotating = { AUTH_TOKEN_SECRET: NEW_SECRET, AUTH_TOKEN_SECRET_PREVIOUS: OLD_SECRET };
    await expectProblem(await apiWithVars(rotating, "/v1/users/me", { headers: bearer(expired) }), 401, "INVALID_TOKEN");
  });
});

describe("DATA_ENCRYPTION_KEY rotation", () => {
  it("moves every sealed value to the new key (TOTP seeds, provider tokens); the accounts work with the old key gone", async () => {
    const alice = await verifiedUser("rot-alice");
    const enrolment = await enrolTotp(alice.tokens.access_token, alice.password);
    const bob = await verifiedUser("rot-bob");
    const linked = await linkProvider("github", bearer(bob.tokens.access_token), { current_password: bob.password }, profile());
    expect(linked.status).toBe(302);
    const before = [await sealedOf(alice.id), await sealedOf(bob.id)];
    expect(before[0]!.totp).toMatch(/^v2\.0\./);
    expect(before[1]!.links[0]!.a).toMatch(/^v2\.0\./);

    // With key 1 added (it seals), nothing is unreadable: the old values still open with key 0.
    await runScheduled(ROTATING);
    const after = [await sealedOf(alice.id), await sealedOf(bob.id)];
    expect(after[0]!.totp).toMatch(/^v2\.1\./);
    for (const link of after[1]!.links) {
      expect(link.a).toMatch(/^v2\.1\./);
      if (link.r !== null) expect(link.r).toMatch(/^v2\.1\./);
    }
    // Nothing is left under key 0 anywhere.
    const left = await env.DB.prepare(
      `SELECT (SELECT count(*) FROM users WHERE totp_secret NOT LIKE 'v2.1.%')
        + (SELECT count(*) FROM oauth_accounts WHERE access_token_sealed NOT LIKE 'v2.1.%' OR refresh_token_sealed NOT LIKE 'v2.1.%') AS n`,
    ).first<{ n: number }>();
    expect(left!.n).toBe(0);
    // A second run finds nothing to move and changes nothing.
    await runScheduled(ROTATING);
    expect([await sealedOf(alice.id), await sealedOf(bob.id)]).toEqual(after);

    // Key 0 retired: Alice signs in with her authenticator as before.
    await awayFromStepEnd();
    const signedIn = await challenge(RETIRED, alice, enrolment.authenticator.next());
    expect(signedIn.status, await signedIn.clone().text()).toBe(200);
  });

  it("a seed sealed with a removed key: its codes get a clear 403, a recovery code signs in, and the user can enrol again", async () => {
    const carol = await verifiedUser("rot-carol");
    const enrolment = await enrolTotp(carol.tokens.access_token, carol.password);
    // No re-encryption ran: the seed is still under key 0, which this configuration no longer has.
    await awayFromStepEnd();
    const refused = await challenge(RETIRED, carol, enrolment.authenticator.peek());
    const problem = await expectProblem(refused, 403, "TOTP_SEED_UNREADABLE");
    expect(problem.detail).toMatch(/recovery code/);

    const recovered = await challenge(RETIRED, carol, enrolment.recoveryCodes[0]!);
    expect(recovered.status, await recovered.clone().text()).toBe(200);
    const tokens = (await recovered.json()) as { access_token: string };
    const auth = bearer(tokens.access_token);
    expect((await apiWithVars(RETIRED, "/v1/users/me", { headers: auth })).status).toBe(200);

    // Turning TOTP off takes a recovery code too; then a new enrolment seals with key 1.
    const disabled = await apiWithVars(
      RETIRED,
      "/v1/auth/mfa/totp/disable",
      json({ current_password: carol.password, code: enrolment.recoveryCodes[1] }, auth),
    );
    expect(disabled.status, await disabled.clone().text()).toBe(204);
    const setup = await apiWithVars(RETIRED, "/v1/auth/mfa/totp/setup", json({}, auth));
    expect(setup.status, await setup.clone().text()).toBe(200);
    expect((await sealedOf(carol.id)).totp).toBeNull();
  });

  it("derives the same release pseudonyms before, during and after a rotation", () => {
    const pseudonymsUnder = (vars: Record<string, string>) => {
      const key = pseudonymKey(loadConfig({ ...env, ...vars } as typeof env).pseudonymSecret);
      return [1, 2, 42, 9_000_000].map((id) => ownerPseudonym(key, id));
    };
    const before = pseudonymsUnder({});
    expect(pseudonymsUnder(ROTATING)).toEqual(before);
    expect(pseudonymsUnder(RETIRED)).toEqual(before);
    // A key 0 that is not the old one would change them: the configuration is what keeps them.
    expect(pseudonymsUnder({ DATA_ENCRYPTION_KEY: KEY_1 })).not.toEqual(before);
  });
});
