import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { api, expectProblem } from "../support/http";
import { captureLogs } from "../support/logs";

// A real failure, not a simulated one: the units table is dropped (storage is per test file),
// so the units query throws inside D1.
describe("unexpected exceptions", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("answer 500 with a generic detail and the request id, and log the cause", async () => {
    await api("/live");
    await env.DB.exec("DROP TABLE units");
    logs = captureLogs();

    const response = await api("/v1/units", { headers: { "X-Request-ID": "boom-1" } });
    const raw = await response.clone().text();
    const body = await expectProblem(response, 500, "INTERNAL_ERROR");
    expect(body).toEqual({
      type: "about:blank",
      title: "Internal Server Error",
      status: 500,
      detail: "Internal server error",
      code: "INTERNAL_ERROR",
      request_id: "boom-1",
    });
    expect(raw).not.toMatch(/units|SQL|D1_|stack|Error:/i);

    const logged = logs.entries().find((entry) => entry.msg === "unhandled exception");
    expect(logged).toMatchObject({ level: "error", request_id: "boom-1", path: "/v1/units" });
    expect(JSON.stringify(logged)).toMatch(/no such table: units/);
  });
});
