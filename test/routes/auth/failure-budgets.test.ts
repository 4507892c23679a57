import { describe, expect, it } from "vitest";
import { bearerLogin, type Identity, newIdentity, patchMe, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { expectProblem } from "../../support/http";
import { expectRateLimited, fireTogether, freshIp, limitedPost, statusCounts, unknownEmail } from "../../support/limits";
import { captureLogs } from "../../support/logs";

// The failure budgets, which are guards: on whatever the request-rate limiters' switch says.

const login = (username: string, password: string) => postJson("/v1/auth/bearer/login", { username, password });

type Answer = { status: number; headers: string[][]; body: unknown };

/** What a response tells its caller, less what differs between any two requests: ids, tokens, seconds left, lengths. */
async function answer(response: Response): Promise<Answer> {
  const headers = [...response.headers]
    // Server-Timing is development's (rows read differ with what exists); production sends none.
    .filter(([name]) => name !== "x-request-id" && name !== "content-length" && name !== "server-timing")
    // The bookmark names the database state each request saw: it moves with every write anywhere.
    .map(([name, value]) => [
      name,
      name === "retry-after" ? "<s>" : name === "x-d1-bookmark" ? "<bookmark>" : value.replace(/\bt=\d+/g, "t=<s>"),
    ]);
  const body = (await response.json()) as Record<string, unknown>;
  return {
    status: response.status,
    headers,
    body:
      response.status === 200
        ? Object.keys(body).sort()
        : { ...body, request_id: "<id>", detail: String(body.detail).replace(/\d+ s\.$/, "<s> s.") },
  };
}

describe("failed-login budget: 3 per minute per address (any alias) and per username, always on", () => {
  const BUDGET_POLICY = '"failed-login";q=3;w=60';

  async function expectBudgetSpent(response: Response): Promise<void> {
    const retryAfter = await expectRateLimited(response, BUDGET_POLICY);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(response.headers.get("ratelimit")).toMatch(/^"failed-login";r=0;t=\d+$/);
  }

  it("refuses even the right password after 3 wrong ones, from any IP", async () => {
    const user = await registerUser();
    for (let i = 0; i < 3; i++) await expectProblem(await login(user.email, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(user.email, user.password));
    // With the request-rate limiters on and a fresh IP, the account's budget still holds.
    await expectBudgetSpent(await limitedPost(freshIp(), "/v1/auth/bearer/login", { username: user.email, password: user.password }));
    await expectBudgetSpent(await postJson("/v1/auth/session/login", { username: user.email, password: user.password }));
  });

  it("shares one budget between the email and its aliases: case, +tag, and for Gmail dots and googlemail.com", async () => {
    const identity = newIdentity("gm");
    const user = await registerUser({ ...identity, email: `${identity.username.replaceAll("_", ".")}@gmail.com` });
    const local = user.email.split("@")[0]!;
    const dotless = local.replaceAll(".", "");
    // Every spelling finds the account (a success counts nothing).
    expect((await login(`${dotless}@googlemail.com`, user.password)).status).toBe(200);
    await expectProblem(await login(user.email.toUpperCase(), "wrong-password-1"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectProblem(await login(`${local}+alias@gmail.com`, "wrong-password-2"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectProblem(await login(`${dotless}@googlemail.com`, "wrong-password-3"), 400, "LOGIN_BAD_CREDENTIALS");
    for (const spelling of [user.email, `${local.toUpperCase()}+other@gmail.com`, `${dotless}@GoogleMail.com`]) {
      await expectBudgetSpent(await login(spelling, user.password));
    }
  });

  it("gives the username a budget of its own, which answers the same whether the address's budget is spent or not", async () => {
    const [spent, untouched] = [await registerUser(), await registerUser()];
    for (let i = 0; i < 3; i++) await expectProblem(await login(spent.email, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(spent.email, spent.password));

    // The same attempts by username on both accounts; only the first has a spent address.
    async function byUsername(user: Identity): Promise<Answer[]> {
      const seen: Response[] = [];
      const attempt = async (username: string, password: string) => {
        const response = await login(username, password);
        seen.push(response.clone());
        return response;
      };
      await expectProblem(await attempt(user.username, "wrong-password-1"), 400, "LOGIN_BAD_CREDENTIALS");
      expect((await attempt(user.username, user.password)).status).toBe(200);
      await expectProblem(await attempt(user.username.toUpperCase(), "wrong-password-2"), 400, "LOGIN_BAD_CREDENTIALS");
      await expectProblem(await attempt(user.username, "wrong-password-3"), 400, "LOGIN_BAD_CREDENTIALS");
      // 3 wrong by username: its own budget is spent, even for the right password.
      await expectBudgetSpent(await attempt(user.username, user.password));
      return Promise.all(seen.map(answer));
    }
    // Nothing in these answers tells the two accounts apart: a 429 does not link a username to an address.
    expect(await byUsername(spent)).toEqual(await byUsername(untouched));

    // The username's failures took nothing from the address, and the spent address stays spent.
    expect((await login(untouched.email, untouched.password)).status).toBe(200);
    await expectBudgetSpent(await login(spent.email, spent.password));
  });

  it("limits an unknown email exactly like a known one", async () => {
    const ghost = unknownEmail("unknown");
    for (let i = 0; i < 3; i++) await expectProblem(await login(ghost, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(ghost, "wrong-password-3"));
    await expectBudgetSpent(await login(ghost.replace("@", "+alias@"), "wrong-password-4"));
  });

  it("does not count successful logins", async () => {
    const user = await registerUser();
    await expectProblem(await login(user.email, "wrong-password-1"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectProblem(await login(user.email, "wrong-password-2"), 400, "LOGIN_BAD_CREDENTIALS");
    expect((await login(user.email, user.password)).status).toBe(200);
    await expectProblem(await login(user.email, "wrong-password-3"), 400, "LOGIN_BAD_CREDENTIALS");
    await expectBudgetSpent(await login(user.email, "wrong-password-4"));
  });

  it("lets exactly 3 of 10 concurrent wrong attempts be checked", async () => {
    const user = await registerUser();
    const responses = await fireTogether(10, (index) => login(user.email, `wrong-password-${index}`));
    expect(statusCounts(responses)).toEqual({ 400: 3, 429: 7 });
    for (const response of responses) {
      if (response.status === 400) await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
      else await expectBudgetSpent(response);
    }
  });

  // The budget is reserved while the account is looked up, so the refusal names no user.
  it("audits the refusal without the address or the password", async () => {
    const user = await registerUser();
    for (let i = 0; i < 3; i++) await expectProblem(await login(user.email, `wrong-password-${i}`), 400, "LOGIN_BAD_CREDENTIALS");
    const logs = captureLogs();
    try {
      await expectBudgetSpent(await login(user.email, user.password));
    } finally {
      logs.restore();
    }
    const lines = logs.lines.filter((line) => line.includes('"event":"rate_limit.exceeded"'));
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(JSON.parse(line)).toMatchObject({
      msg: "audit",
      event: "rate_limit.exceeded",
      limits: "failed-login",
      subject: "email",
      user_id: null,
    });
    expect(line).not.toContain(user.email);
    expect(line).not.toContain(user.email.split("@")[0]!);
    expect(line).not.toContain(user.password);
  });
});

describe("wrong-secret budget at the step-up", () => {
  const WRONG_SECRET_POLICY = '"wrong-secret-minute";q=3;w=60, "wrong-secret-day";q=100;w=86400';
  const newPassword = "quiet-meadow-61-lantern";

  async function expectSecretBudgetSpent(response: Response, dayUsed: number): Promise<void> {
    const retryAfter = await expectRateLimited(response, WRONG_SECRET_POLICY);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(response.headers.get("ratelimit")).toMatch(
      new RegExp(`^"wrong-secret-minute";r=0;t=\\d+, "wrong-secret-day";r=${100 - dayUsed};t=\\d+$`),
    );
  }

  it("refuses the right current password after 3 wrong ones", async () => {
    const user = await verifiedUser("stepup");
    const token = user.tokens.access_token;
    for (let i = 0; i < 3; i++) {
      await expectProblem(await patchMe(token, { password: newPassword, current_password: "wrong" }), 403, "CURRENT_PASSWORD_INVALID");
    }
    await expectSecretBudgetSpent(await patchMe(token, { password: newPassword, current_password: user.password }), 3);
    // The password was not changed: the old one still signs in.
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  it("does not count a correct step-up", async () => {
    const user = await verifiedUser("stepup");
    const token = user.tokens.access_token;
    // Re-stating the current email runs the step-up without changing anything (no revocation).
    const right = () => patchMe(token, { email: user.email, current_password: user.password });
    const wrong = () => patchMe(token, { email: user.email, current_password: "wrong" });
    expect((await right()).status).toBe(200);
    expect((await right()).status).toBe(200);
    await expectProblem(await wrong(), 403, "CURRENT_PASSWORD_INVALID");
    expect((await right()).status).toBe(200);
    await expectProblem(await wrong(), 403, "CURRENT_PASSWORD_INVALID");
    await expectProblem(await wrong(), 403, "CURRENT_PASSWORD_INVALID");
    await expectSecretBudgetSpent(await right(), 3);
  });

  it("lets a real email change through after a wrong guess, and the budget is per account", async () => {
    const user = await verifiedUser("stepup");
    await expectProblem(
      await patchMe(user.tokens.access_token, { email: `moved.${user.email}`, current_password: "wrong" }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    const moved = await patchMe(user.tokens.access_token, { email: `moved.${user.email}`, current_password: user.password });
    expect(moved.status, await moved.clone().text()).toBe(200);
    // Another account's step-up is untouched by this one's guesses.
    const other = await verifiedUser("stepup");
    for (let i = 0; i < 3; i++) {
      await expectProblem(
        await patchMe(other.tokens.access_token, { email: other.email, current_password: "wrong" }),
        403,
        "CURRENT_PASSWORD_INVALID",
      );
    }
    const again = await bearerLogin({ email: `moved.${user.email}`, password: user.password });
    expect((await patchMe(again.access_token, { email: `moved.${user.email}`, current_password: user.password })).status).toBe(200);
  });
});
