import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { startSession } from "../../src/services/sign-in/sessions";
import { registerUser } from "../support/accounts";

const SECRET = env.AUTH_TOKEN_SECRET;

describe("startSession", () => {
  it("starts nothing when the account changed after its credentials were checked", async () => {
    const user = await registerUser();
    const { db } = createDb(env.DB);
    const row = await env.DB.prepare("SELECT hashed_password, tokens_valid_after FROM users WHERE id = ?")
      .bind(user.id)
      .first<{ hashed_password: string; tokens_valid_after: number }>();
    const checked = { hashedPassword: row!.hashed_password, tokensValidAfter: row!.tokens_valid_after };

    // Revoked, password changed, deactivated: each while "the password was being verified".
    const stale = [
      { ...checked, tokensValidAfter: checked.tokensValidAfter - 1 },
      { ...checked, hashedPassword: "$argon2id$v=19$m=64,t=1,p=1$b2xk$b2xk" },
    ];
    for (const state of stale) expect(await startSession({ db }, SECRET, user.id, state, { recordLogin: true })).toBeNull();
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(user.id).run();
    expect(await startSession({ db }, SECRET, user.id, checked, { recordLogin: true })).toBeNull();
    const count = await env.DB.prepare("SELECT count(*) AS n FROM refresh_tokens WHERE user_id = ?").bind(user.id).first<{ n: number }>();
    expect(count?.n).toBe(0);

    await env.DB.prepare("UPDATE users SET is_active = 1 WHERE id = ?").bind(user.id).run();
    expect(await startSession({ db }, SECRET, user.id, checked, { recordLogin: true })).not.toBeNull();
  });
});
