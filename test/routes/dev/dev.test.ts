import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, apiWithVars, expectProblem, PRODUCTION_VARS } from "../../support/http";

function send(to: string, subject: string) {
  return api("/__dev/outbox", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ to, subject, text: `Body of ${subject}` }),
  });
}

describe("development outbox", () => {
  it("keeps messages per recipient, newest first", async () => {
    for (const subject of ["first", "second", "third"]) expect((await send("Reader@Example.org", subject)).status).toBe(204);
    expect((await send("other@example.org", "not yours")).status).toBe(204);

    const response = await api("/__dev/outbox?to=reader@example.org");
    expect(response.status).toBe(200);
    const { items } = (await response.json()) as { items: Record<string, string>[] };
    expect(items.map((item) => item.subject)).toEqual(["third", "second", "first"]);
    expect(items[0]).toEqual({
      to: "Reader@Example.org",
      subject: "third",
      text: "Body of third",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
  });

  it("is empty for an address that received nothing", async () => {
    const response = await api("/__dev/outbox?to=nobody@example.org");
    expect(await response.json()).toEqual({ items: [] });
  });

  it("needs a valid address", async () => {
    await expectProblem(await api("/__dev/outbox"), 422, "VALIDATION_FAILED");
  });

  it.each(["production", "staging"])("does not exist in %s", async (environment) => {
    const vars = { ...PRODUCTION_VARS, ENVIRONMENT: environment };
    await expectProblem(await apiWithVars(vars, "/__dev/outbox?to=reader@example.org"), 404, "NOT_FOUND");
    const post = await apiWithVars(vars, "/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ to: "a@example.org", subject: "s", text: "t" }),
    });
    await expectProblem(post, 404, "NOT_FOUND");
    await expectProblem(await apiWithVars(vars, "/__dev/outbox", { method: "DELETE" }), 404, "NOT_FOUND");
  });

  it("does not exist under a public host name, even in development", async () => {
    const request = new Request("https://api.relab.example/__dev/outbox?to=reader@example.org");
    await expectProblem(await exports.default.fetch(request), 404, "NOT_FOUND");
  });
});
