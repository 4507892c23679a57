import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../../src/auth/tokens";
import { me, type TokenPair } from "../../support/accounts";
import { expectProblem, getSetCookie } from "../../support/http";
import { enrolTotp } from "../../support/mfa";
import {
  appPkce,
  appResult,
  appSignIn,
  claimLogin,
  claimMfa,
  NATIVE_ACCOUNT,
  NATIVE_LOGIN,
  profile,
  tokenAuthorize,
} from "../../support/oauth";

// What binds a token-flow sign-in to the app that started it (api-spec.md, Identity-provider
// sign-in): the app sends its own PKCE challenge (S256) to GET /v1/oauth/{provider}/token/authorize
// (required: 400 CODE_CHALLENGE_REQUIRED) and claims the hand-off with the verifier. A hand-off
// made by someone else's sign-in and planted on the app (say in a crafted relab:// link) cannot be
// claimed there: without the verifier or with another one the claim is 400 OAUTH_HANDOFF_INVALID,
// and the hand-off stays claimable by the app holding the right verifier. The token flow's
// happy paths are in token-flow.test.ts.

async function idOf(accessToken: string): Promise<number> {
  const response = await me(accessToken);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

/** The app's challenge stored with a hand-off, or undefined when there is no such hand-off. */
const storedChallenge = async (handoff: string) =>
  (
    await env.DB.prepare("SELECT app_challenge FROM oauth_handoffs WHERE fingerprint = ?")
      .bind(fingerprint(handoff))
      .first<{ app_challenge: string | null }>()
  )?.app_challenge;

describe("the app's code_challenge", () => {
  it.each(["google", "github"] as const)(
    "is required by the %s token authorize: 400 CODE_CHALLENGE_REQUIRED, no cookie",
    async (provider) => {
      for (const target of [NATIVE_LOGIN, NATIVE_ACCOUNT]) {
        const response = await tokenAuthorize(provider, target, null);
        const problem = await expectProblem(response, 400, "CODE_CHALLENGE_REQUIRED");
        expect(problem.detail).toContain("code_challenge");
        expect(getSetCookie(response)).toEqual([]);
      }
    },
  );

  it("must be base64url(SHA-256(...)): 43 characters of the base64url alphabet, else 422", async () => {
    const { challenge } = await appPkce();
    for (const malformed of [
      "",
      challenge.slice(0, 42),
      `${challenge}A`,
      `${challenge.slice(0, 42)}+`,
      `${challenge.slice(0, 42)}=`,
      `${challenge.slice(0, 42)}/`,
    ]) {
      const response = await tokenAuthorize("google", NATIVE_LOGIN, malformed);
      await expectProblem(response, 422, "VALIDATION_FAILED");
      expect(getSetCookie(response)).toEqual([]);
    }
    expect((await tokenAuthorize("google", NATIVE_LOGIN, challenge)).status).toBe(200);
  });

  it("is kept with the hand-off the callback makes", async () => {
    const pkce = await appPkce();
    const { response } = await appSignIn("google", profile(), NATIVE_LOGIN, pkce);
    const handoff = appResult(response, "success", "login_handoff");
    expect(await storedChallenge(handoff)).toBe(pkce.challenge);
  });
});

describe("a login hand-off planted on another app", () => {
  it.each(["google", "github"] as const)(
    "with %s: is refused without the verifier or with another one, and stays claimable by its own app",
    async (provider) => {
      // The attacker's own app sign-in: the hand-off is theirs, bound to their challenge.
      const attacker = profile();
      const attackerApp = await appPkce();
      const planted = await appSignIn(provider, attacker, NATIVE_LOGIN, attackerApp);
      const handoff = appResult(planted.response, "success", "login_handoff");
      // The victim's app, holding the verifier of its own pending sign-in, receives the hand-off.
      const victimApp = await appPkce();

      await expectProblem(await claimLogin(handoff), 400, "OAUTH_HANDOFF_INVALID");
      await expectProblem(await claimLogin(handoff, victimApp.verifier), 400, "OAUTH_HANDOFF_INVALID");
      // Nor does the challenge itself (it travelled in a URL) pass for the verifier.
      await expectProblem(await claimLogin(handoff, attackerApp.challenge), 400, "OAUTH_HANDOFF_INVALID");
      // A verifier that is no verifier at all is a validation error.
      await expectProblem(await claimLogin(handoff, "short"), 422, "VALIDATION_FAILED");

      // None of that spent it: the app that started the sign-in claims it, for the attacker's account.
      const claim = await claimLogin(handoff, attackerApp.verifier);
      expect(claim.status, await claim.clone().text()).toBe(200);
      const tokens = (await claim.json()) as TokenPair;
      const account = await me(tokens.access_token);
      expect(((await account.json()) as { email: string }).email).toBe(attacker.email);
      await expectProblem(await claimLogin(handoff, attackerApp.verifier), 400, "OAUTH_HANDOFF_INVALID");
    },
  );

  it("two sign-ins of one account: each hand-off is claimed only with its own app's verifier", async () => {
    const who = profile();
    const first = await appSignIn("google", who);
    const second = await appSignIn("google", who);
    const firstHandoff = appResult(first.response, "success", "login_handoff");
    const secondHandoff = appResult(second.response, "success", "login_handoff");
    await expectProblem(await claimLogin(firstHandoff, second.verifier), 400, "OAUTH_HANDOFF_INVALID");
    await expectProblem(await claimLogin(secondHandoff, first.verifier), 400, "OAUTH_HANDOFF_INVALID");
    const ids: number[] = [];
    for (const [handoff, verifier] of [
      [firstHandoff, first.verifier],
      [secondHandoff, second.verifier],
    ] as const) {
      const claim = await claimLogin(handoff, verifier);
      expect(claim.status, await claim.clone().text()).toBe(200);
      ids.push(await idOf(((await claim.json()) as TokenPair).access_token));
    }
    expect(ids[1]).toBe(ids[0]);
  });
});

describe("an MFA hand-off of the token flow", () => {
  it("is refused without the verifier or with another one, and stays claimable by its own app", async () => {
    const who = profile();
    const signUp = await appSignIn("github", who);
    const claim = await claimLogin(appResult(signUp.response, "success", "login_handoff"), signUp.verifier);
    expect(claim.status, await claim.clone().text()).toBe(200);
    await enrolTotp(((await claim.json()) as TokenPair).access_token, undefined);

    const planted = await appSignIn("github", who);
    const handoff = appResult(planted.response, "mfa_required", "mfa_handoff");
    const victim = await appPkce();
    await expectProblem(await claimMfa(handoff), 400, "OAUTH_HANDOFF_INVALID");
    await expectProblem(await claimMfa(handoff, victim.verifier), 400, "OAUTH_HANDOFF_INVALID");
    await expectProblem(await claimMfa(handoff, "x".repeat(129)), 422, "VALIDATION_FAILED");

    const right = await claimMfa(handoff, planted.verifier);
    expect(right.status, await right.clone().text()).toBe(200);
    expect(await right.json()).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    await expectProblem(await claimMfa(handoff, planted.verifier), 400, "OAUTH_HANDOFF_INVALID");
  });
});
