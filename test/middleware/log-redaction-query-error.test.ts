import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { api, expectProblem } from "../support/http";
import { captureLogs } from "../support/logs";
import { startAsNewIsolate } from "../support/new-isolate";

// What an isolate does on its first request: a first request again in the shared runtime.
await startAsNewIsolate();

// A real failed INSERT through drizzle: its error quotes every bound value (here the bootstrap
// superuser's address and password hash). A trigger makes D1 refuse the insert.
describe("a failed query's bound values never reach the log", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("while the query and D1's own message do", async () => {
    await env.DB.exec("CREATE TRIGGER refuse_users BEFORE INSERT ON users BEGIN SELECT RAISE(ABORT, 'inserts refused for the test'); END;");
    logs = captureLogs();

    await expectProblem(await api("/v1/units"), 500, "INTERNAL_ERROR");

    const failure = logs.entries().find((entry) => entry.msg === "unhandled exception");
    const logged = JSON.stringify(failure);
    expect(logged).toContain("Failed query: insert into");
    expect(logged).toContain("params: [redacted]");
    expect(logged).toContain("inserts refused for the test");
    const output = logs.lines.join("\n");
    expect(output).not.toContain(env.BOOTSTRAP_SUPERUSER_EMAIL);
    expect(output).not.toContain("$argon2id");
  });
});
