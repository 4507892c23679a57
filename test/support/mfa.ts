import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { base32Decode, TOTP_PERIOD_SECONDS, totp, totpStep } from "../../src/auth/totp";
import { bearer, bearerLogin, me, postJson, type TokenPair } from "./accounts";
import { oncePerFile } from "./test-file";

/**
 * An authenticator app for tests. The service accepts the current step ±1 and never a step at or
 * before the last accepted one, so each `next()` gives the code of the earliest step still
 * acceptable: three codes per 30 s, then it throws rather than hand out a replay.
 */
export class TestAuthenticator {
  private last: number;
  constructor(
    readonly seed: Uint8Array,
    lastUsedStep = -1,
  ) {
    this.last = lastUsedStep;
  }

  static fromSecret(secret: string): TestAuthenticator {
    return new TestAuthenticator(base32Decode(secret));
  }

  next(): string {
    const step = this.nextStep();
    this.last = step;
    return totp(this.seed, step * TOTP_PERIOD_SECONDS);
  }

  /** The code `next()` would give, without using it up: for requests that fail before the code is checked. */
  peek(): string {
    return totp(this.seed, this.nextStep() * TOTP_PERIOD_SECONDS);
  }

  private nextStep(): number {
    const now = Date.now() / 1000;
    const step = Math.max(this.last + 1, totpStep(now) - 1);
    if (step > totpStep(now) + 1) throw new Error("no unused TOTP step left in the window; use a recovery code");
    return step;
  }

  /** A code the service must refuse: a step just used again. */
  replay(): string {
    return totp(this.seed, this.last * TOTP_PERIOD_SECONDS);
  }

  /** A well-formed code outside the accepted window. */
  stale(): string {
    return totp(this.seed, (totpStep(Date.now() / 1000) - 5) * TOTP_PERIOD_SECONDS);
  }
}

export interface Enrolment {
  authenticator: TestAuthenticator;
  recoveryCodes: string[];
  /** The enrolling device's new session (every older one was revoked). */
  tokens: TokenPair;
}

/**
 * Waits out the last 4 s of a TOTP step. A fresh authenticator's first code is of the step before
 * the current one, which the service stops accepting when the current step ends: a code taken in
 * those last seconds could expire while a slow request is on its way.
 */
export async function awayFromStepEnd(): Promise<void> {
  const left = TOTP_PERIOD_SECONDS - ((Date.now() / 1000) % TOTP_PERIOD_SECONDS);
  if (left <= 4) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 50));
}

/** Turns TOTP on for a bearer-signed-in account (setup, then confirm with the password and a code). */
export async function enrolTotp(accessToken: string, password: string | undefined): Promise<Enrolment> {
  const setup = await postJson("/v1/auth/mfa/totp/setup", {}, bearer(accessToken));
  expect(setup.status, await setup.clone().text()).toBe(200);
  const { setup_token, secret } = (await setup.json()) as { setup_token: string; secret: string };
  const authenticator = TestAuthenticator.fromSecret(secret);
  await awayFromStepEnd();
  const body = { setup_token, code: authenticator.next(), ...(password === undefined ? {} : { current_password: password }) };
  const confirmed = await postJson("/v1/auth/mfa/totp/confirm", body, bearer(accessToken));
  expect(confirmed.status, await confirmed.clone().text()).toBe(200);
  const { recovery_codes, tokens } = (await confirmed.json()) as { recovery_codes: string[]; tokens: TokenPair };
  return { authenticator, recoveryCodes: recovery_codes, tokens };
}

/** Signs a TOTP account in with bearer tokens: password, then the challenge with `code`. */
export async function bearerLoginWithCode(identity: { email: string; password: string }, code: string): Promise<TokenPair> {
  const login = await postJson("/v1/auth/bearer/login", { username: identity.email, password: identity.password });
  expect(login.status, await login.clone().text()).toBe(202);
  const { mfa_token } = (await login.json()) as { mfa_token: string };
  const answered = await postJson("/v1/auth/mfa/challenge", { mfa_token, code });
  expect(answered.status, await answered.clone().text()).toBe(200);
  return (await answered.json()) as TokenPair;
}

export interface Admin extends Enrolment {
  id: number;
  email: string;
  password: string;
}

const admin = oncePerFile(async (): Promise<Admin> => {
  const identity = { email: env.BOOTSTRAP_SUPERUSER_EMAIL, password: env.BOOTSTRAP_SUPERUSER_PASSWORD };
  const tokens = await bearerLogin(identity);
  const { id } = (await (await me(tokens.access_token)).json()) as { id: number };
  const enrolment = await enrolTotp(tokens.access_token, identity.password);
  return { ...enrolment, ...identity, id };
});

/**
 * The bootstrap superuser of this test file's database, with TOTP enrolled (once per file:
 * storage is per file), signed in with bearer tokens.
 */
export function bootstrapAdmin(): Promise<Admin> {
  return admin();
}
