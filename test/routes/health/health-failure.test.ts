import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { api } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { startAsNewIsolate } from "../../support/new-isolate";

// What an isolate does on its first request: a first request again in the shared runtime.
await startAsNewIsolate();

// The database loses its schema for real (storage is per test file): the D1 probe must fail.
describe("GET /health when D1 fails", () => {
  let logs: ReturnType<typeof captureLogs>;
  afterEach(() => logs.restore());

  it("answers 503 unhealthy, names the failed check, and logs why", async () => {
    // camera_streams refers to both: it goes first, or dropping users would cascade into it. The
    // tables whose triggers read products go before products (D1 keeps foreign keys on).
    await env.DB.exec(
      "PRAGMA foreign_keys = OFF; DROP TABLE camera_streams; DROP TABLE bill_of_materials; DROP TABLE images; DROP TABLE files; DROP TABLE videos; DROP TABLE products; DROP TABLE users;",
    );
    logs = captureLogs();

    const response = await api("/health");
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "unhealthy", checks: { d1: "fail", kv: "ok", r2: "ok" } });
    expect(response.headers.get("cache-control")).toBe("no-store");
    // Bootstrap could not run either; for a probe that is logged, not fatal.
    expect(logs.entries().some((entry) => String(entry.msg).startsWith("bootstrap superuser check failed"))).toBe(true);
    const failure = logs.entries().find((entry) => entry.msg === "health probe failed");
    expect(failure).toMatchObject({ level: "error", probe: "d1" });
    expect(JSON.stringify(failure)).toContain("no such table: users");
  });

  it("/live still answers: liveness does not depend on storage", async () => {
    logs = captureLogs();
    expect((await api("/live")).status).toBe(200);
  });
});
