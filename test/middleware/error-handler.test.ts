import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/env";
import { ApiError } from "../../src/lib/problem";
import { onError } from "../../src/middleware/error-handler";
import { api, expectProblem } from "../support/http";
import { captureLogs } from "../support/logs";

const json = (body: unknown) => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

describe("unknown routes", () => {
  it.each(["/v1/does-not-exist", "/v1/units/extra", "/elsewhere", "/v2"])("%s is a 404 problem", async (path) => {
    const body = await expectProblem(await api(path), 404, "NOT_FOUND");
    expect(body.detail).toBe("No resource exists at this path.");
  });
});

describe("wrong method", () => {
  it("is a 405 problem with Allow", async () => {
    const response = await api("/v1/units", { method: "DELETE" });
    await expectProblem(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("lists every method a path supports", async () => {
    const response = await api("/__dev/outbox", { method: "PUT" });
    await expectProblem(response, 405, "METHOD_NOT_ALLOWED");
    expect(response.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  it("HEAD is answered like GET, without a body", async () => {
    const response = await api("/v1/units", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });
});

// POST /__dev/outbox is a JSON route with a strict body; the same router factory and error
// handler serve every JSON route of the API.
describe("JSON request bodies", () => {
  const valid = { to: "someone@example.org", subject: "Hello", text: "Body" };

  it("another content type is a 415 problem", async () => {
    const response = await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: JSON.stringify(valid),
    });
    await expectProblem(response, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("a body without a content type is a 415 problem", async () => {
    const response = await api("/__dev/outbox", { method: "POST", body: JSON.stringify(valid) });
    await expectProblem(response, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("malformed JSON is a 400 problem", async () => {
    const response = await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"to": "someone@example.org", ',
    });
    const body = await expectProblem(response, 400, "MALFORMED_JSON");
    expect(body.detail).toBe("The request body is not valid JSON.");
  });

  it("malformed JSON is a documented 400 on every route that reads JSON (found by the fuzz test)", async () => {
    // The OpenAPI document listed no 400 for 24 such routes; api() checks the answer against it.
    for (const path of ["/v1/auth/forgot-password", "/v1/auth/validate-email", "/v1/auth/bearer/refresh"]) {
      const response = await api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: "" });
      await expectProblem(response, 400, "MALFORMED_JSON");
    }
  });

  it("a schema violation is a 422 problem with a pointer per error", async () => {
    const response = await api("/__dev/outbox", json({ to: "not-an-email", subject: "", text: 5 }));
    const body = await expectProblem(response, 422, "VALIDATION_FAILED");
    const pointers = body.errors!.map((error) => error.pointer).sort();
    expect(pointers).toEqual(["/subject", "/text", "/to"]);
    for (const error of body.errors!) expect(error.detail.length).toBeGreaterThan(0);
  });

  it("a missing member is reported as required", async () => {
    const response = await api("/__dev/outbox", json({ to: "someone@example.org", subject: "x" }));
    const body = await expectProblem(response, 422, "VALIDATION_FAILED");
    expect(body.errors).toEqual([{ pointer: "/text", detail: "This member is required." }]);
  });

  it("unknown members are refused, one error each", async () => {
    const response = await api("/__dev/outbox", json({ ...valid, is_superuser: true, "a/b": 1 }));
    const body = await expectProblem(response, 422, "VALIDATION_FAILED");
    expect(body.errors!.map((error) => error.pointer).sort()).toEqual(["/a~1b", "/is_superuser"]);
  });

  it("a query parameter violation points into #/query", async () => {
    const response = await api("/__dev/outbox?to=nope");
    const body = await expectProblem(response, 422, "VALIDATION_FAILED");
    expect(body.errors).toEqual([{ pointer: "#/query/to", detail: expect.any(String) }]);
  });
});

describe("errors the service raises on purpose", () => {
  it("a deliberate 5xx keeps its code and detail, and is logged as an outage", async () => {
    const app = new Hono<AppEnv>();
    app.onError(onError);
    app.get("/store", () => {
      throw new ApiError(503, { code: "STORE_UNAVAILABLE", detail: "The idempotency store is unreachable." });
    });
    const logs = captureLogs();
    try {
      const response = await app.request("/store");
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ code: "STORE_UNAVAILABLE", detail: "The idempotency store is unreachable." });
      expect(logs.entries()).toEqual([
        expect.objectContaining({ level: "error", msg: "server error", status: 503, error_code: "STORE_UNAVAILABLE" }),
      ]);
    } finally {
      logs.restore();
    }
  });
});
