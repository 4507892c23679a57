import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { expect } from "vitest";
import { hashPassword } from "../../src/auth/password";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { canonicalEmail, normalizeEmail } from "../../src/lib/email-address";
import { listOutbox, type OutboxItem } from "../../src/services/platform/dev-outbox";
import { startSession, toSessionUser, USER_COLUMNS, type UserRow } from "../../src/services/sign-in/sessions";
import { api } from "./http";

let sequence = 0;

export interface Identity {
  email: string;
  username: string;
  password: string;
}

/** A fresh identity (storage is per test file, but tests within a file share it). */
export function newIdentity(prefix = "user"): Identity {
  const n = `${Date.now().toString(36)}${(sequence++).toString(36)}`;
  return { email: `${prefix}.${n}@example.org`, username: `${prefix}_${n}`, password: `amber-otter-${n}-glides` };
}

export function postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api(path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Registers `identity` (or a fresh one) and returns it with the new id. */
export async function registerUser(identity: Identity = newIdentity()): Promise<Identity & { id: number }> {
  const response = await postJson("/v1/auth/register", identity);
  expect(response.status, await response.clone().text()).toBe(201);
  const { id } = (await response.json()) as { id: number };
  return { ...identity, id };
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

export async function bearerLogin(identity: { email: string; password: string }): Promise<TokenPair> {
  const response = await postJson("/v1/auth/bearer/login", { username: identity.email, password: identity.password });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as TokenPair;
}

/** The newest outbox message to `to` whose subject contains `subject`, waiting briefly for mail sent after the response. */
export async function lastEmail(to: string, subject: string, timeoutMs = 3_000): Promise<OutboxItem> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await listOutbox(env.KV, to)).find((item) => item.subject.includes(subject));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no email "${subject}" to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The token in an email link `<app>/<path>#token=<token>`. */
export function linkToken(item: OutboxItem, path: string): string {
  const match = new RegExp(`/${path}#token=([A-Za-z0-9._-]+)`).exec(item.text);
  if (!match) throw new Error(`no ${path} link in: ${item.text}`);
  return match[1]!;
}

/**
 * Registers, verifies through the emailed link, and signs in with bearer tokens, all over HTTP:
 * the whole sign-up path, as a new user goes through it.
 */
export async function verifiedUserOverHttp(prefix = "user"): Promise<Identity & { id: number; tokens: TokenPair }> {
  const user = await registerUser(newIdentity(prefix));
  const token = linkToken(await lastEmail(user.email, "Confirm your email"), "verify");
  expect((await postJson("/v1/auth/verify", { token })).status).toBe(200);
  return { ...user, tokens: await bearerLogin(user) };
}

/**
 * A verified contributor signed in with bearer tokens, made the way `verifiedUserOverHttp` makes
 * one but without the four requests: the row registration writes (the password hashed by the
 * service's own Argon2id code, with the tests' parameters), marked verified, and a session
 * started by the service's own session code, as a password login starts it.
 */
export async function verifiedUser(prefix = "user"): Promise<Identity & { id: number; tokens: TokenPair }> {
  const identity = newIdentity(prefix);
  const config = loadConfig(env);
  const { db } = createDb(env.DB);
  const email = normalizeEmail(identity.email);
  const hashed = hashPassword(identity.password, config.argon2);
  const [row] = await db.all<UserRow>(sql`INSERT INTO users (email, email_canonical, username, hashed_password, is_verified)
    VALUES (${email}, ${canonicalEmail(email)}, ${identity.username}, ${hashed}, 1) RETURNING ${USER_COLUMNS}`);
  const user = toSessionUser(row!);
  const grant = await startSession({ db }, config.tokenSecret, user.id, user, { recordLogin: true });
  if (!grant) throw new Error(`no session started for ${identity.username}`);
  return { ...identity, id: user.id, tokens: { access_token: grant.accessToken, refresh_token: grant.refreshToken } };
}

export function me(token: string): Promise<Response> {
  return api("/v1/users/me", { headers: bearer(token) });
}

export function patchMe(token: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api("/v1/users/me", {
    method: "PATCH",
    headers: { ...bearer(token), "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * Dates the sign-in of every session of `userId` `seconds` back, as if the user had signed in
 * that long ago (a step-up without password or TOTP needs one within 10 minutes).
 */
export async function ageSessions(userId: number, seconds: number): Promise<void> {
  await env.DB.prepare("UPDATE refresh_tokens SET session_started_at = unixepoch() - ? WHERE user_id = ?").bind(seconds, userId).run();
}
