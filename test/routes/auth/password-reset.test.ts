import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signLinkToken } from "../../../src/auth/tokens";
import { UNIFORM_RESPONSE_MS } from "../../../src/routes/auth/auth.handlers";
import { listOutbox } from "../../../src/services/platform/dev-outbox";
import { bearerLogin, lastEmail, linkToken, me, patchMe, postJson, registerUser } from "../../support/accounts";
import { expectProblem } from "../../support/http";

const forgot = (email: string) => postJson("/v1/auth/forgot-password", { email });
const reset = (token: string, password: string) => postJson("/v1/auth/reset-password", { token, password });

async function resetToken(email: string): Promise<string> {
  expect((await forgot(email)).status).toBe(202);
  return linkToken(await lastEmail(email, "Reset your relab password"), "reset-password");
}

describe("forgot password", () => {
  it("answers known, unknown and inactive addresses with the same accepted response, padded", async () => {
    const known = await registerUser();
    const inactive = await registerUser();
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(inactive.id).run();
    const bodies = [];
    for (const email of [known.email, "nobody.here@example.org", inactive.email]) {
      const started = Date.now();
      const response = await forgot(email);
      expect(Date.now() - started).toBeGreaterThanOrEqual(UNIFORM_RESPONSE_MS - 5);
      expect(response.status).toBe(202);
      expect(response.headers.get("cache-control")).toBe("no-store");
      bodies.push(await response.text());
    }
    expect(new Set(bodies).size).toBe(1);
    expect((await lastEmail(known.email, "Reset your relab password")).text).toMatch(
      /^http:\/\/localhost:8081\/reset-password#token=[\w.-]+$/m,
    );
    // The inactive account gets nothing.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await listOutbox(env.KV, inactive.email)).map((m) => m.subject)).not.toContain("Reset your relab password");
  });
});

describe("reset password", () => {
  it("sets the password, revokes every session and confirms without any link or token", async () => {
    const user = await registerUser();
    const session = await bearerLogin(user);
    const token = await resetToken(user.email);
    const newPassword = "quiet-meadow-51-lantern";
    const response = await reset(token, newPassword);
    expect(response.status).toBe(204);

    await expectProblem(await me(session.access_token), 401, "INVALID_TOKEN");
    await expectProblem(await postJson("/v1/auth/bearer/refresh", { refresh_token: session.refresh_token }), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(
      await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password }),
      400,
      "LOGIN_BAD_CREDENTIALS",
    );
    await bearerLogin({ email: user.email, password: newPassword });

    const confirmation = await lastEmail(user.email, "password was reset");
    expect(confirmation.text).not.toMatch(/https?:|#|token|password:/i);
    expect(confirmation.text).not.toContain(newPassword);
  });

  it("works once: the token is bound to the password it was issued under", async () => {
    const user = await registerUser();
    const token = await resetToken(user.email);
    expect((await reset(token, "quiet-meadow-52-lantern")).status).toBe(204);
    await expectProblem(await reset(token, "quiet-meadow-53-lantern"), 400, "RESET_TOKEN_INVALID");
  });

  it("lets exactly one of two concurrent resets with one token succeed", async () => {
    const user = await registerUser();
    const token = await resetToken(user.email);
    const results = await Promise.all([reset(token, "quiet-meadow-54-lantern"), reset(token, "quiet-meadow-55-lantern")]);
    expect(results.map((r) => r.status).sort()).toEqual([204, 400]);
  });

  it("stops working when the password changes by other means", async () => {
    const user = await registerUser();
    const token = await resetToken(user.email);
    const session = await bearerLogin(user);
    const patched = await patchMe(session.access_token, { password: "quiet-meadow-56-lantern", current_password: user.password });
    expect(patched.status).toBe(200);
    await expectProblem(await reset(token, "quiet-meadow-57-lantern"), 400, "RESET_TOKEN_INVALID");
  });

  it("refuses expired, tampered and verification tokens", async () => {
    const user = await registerUser();
    const stored = await env.DB.prepare("SELECT hashed_password AS h FROM users WHERE id = ?").bind(user.id).first<{ h: string }>();
    const binding = `${stored!.h}|${user.email}`;
    const secret = env.AUTH_TOKEN_SECRET;
    const past = Math.floor(Date.now() / 1000) - 1;
    const future = Math.floor(Date.now() / 1000) + 600;
    for (const token of [
      signLinkToken(secret, "reset", user.id, past, binding),
      signLinkToken(secret, "verify", user.id, future, binding),
      signLinkToken(secret, "reset", user.id, future, `another hash|${user.email}`),
      `${user.id}.${future}.${"A".repeat(43)}`,
    ]) {
      await expectProblem(await reset(token, "quiet-meadow-58-lantern"), 400, "RESET_TOKEN_INVALID");
    }
    // A good token still has to meet the password rules.
    const good = signLinkToken(secret, "reset", user.id, future, binding);
    await expectProblem(await reset(good, "short"), 422, "PASSWORD_REJECTED");
  });
});

describe("reset links and email changes", () => {
  it("voids a reset link sent to an address the account no longer uses", async () => {
    const user = await registerUser();
    const token = await resetToken(user.email);
    const session = await bearerLogin(user);
    const moved = `moved.${user.email}`;
    expect((await patchMe(session.access_token, { email: moved, current_password: user.password })).status).toBe(200);
    await expectProblem(await reset(token, "quiet-meadow-59-lantern"), 400, "RESET_TOKEN_INVALID");
  });
});
