import { describe, expect, it } from "vitest";
import { MAX_JSON_BODY_BYTES } from "../../src/middleware/body-limit";
import { api, expectProblem } from "../support/http";

function jsonOfSize(bytes: number): string {
  const envelope = JSON.stringify({ to: "someone@example.org", subject: "big", text: "" });
  return envelope.replace('"text":""', `"text":"${"x".repeat(bytes - envelope.length)}"`);
}

describe("request body size", () => {
  it("a body of exactly 1 MiB is read (and then validated)", async () => {
    const body = jsonOfSize(MAX_JSON_BODY_BYTES);
    expect(body.length).toBe(MAX_JSON_BODY_BYTES);
    const response = await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body,
    });
    // 422, not 413: the text is longer than the route allows, which only validation can say.
    await expectProblem(response, 422, "VALIDATION_FAILED");
  });

  it("one byte more is a 413 problem", async () => {
    const response = await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: jsonOfSize(MAX_JSON_BODY_BYTES + 1),
    });
    await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
  });

  it("a chunked body without Content-Length is cut off at the limit too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_JSON_BODY_BYTES * 2) controller.close();
        else {
          controller.enqueue(chunk);
          sent += chunk.length;
        }
      },
      cancel() {
        // The Worker stops reading at the limit; that is the behaviour under test.
      },
    });
    const response = await api("/__dev/outbox", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: stream,
      // @ts-expect-error duplex is required for streamed request bodies but missing from the type
      duplex: "half",
    });
    await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
  });

  it("multipart bodies are held to the same limit", async () => {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(MAX_JSON_BODY_BYTES + 1)]), "big.bin");
    const response = await api("/__dev/outbox", { method: "POST", body: form });
    await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
  });

  it("a write that takes no body answers an oversized one with a documented 413 too (found by the fuzz test)", async () => {
    // The limit runs in front of every route; the OpenAPI document listed 413 only where a body is declared.
    for (const [method, path] of [
      ["POST", "/v1/auth/sessions/revoke-all"],
      ["DELETE", "/v1/admin/materials/1/categories/1"],
    ] as const) {
      const response = await api(path, {
        method,
        headers: { "Content-Type": "application/json" },
        body: jsonOfSize(MAX_JSON_BODY_BYTES + 1),
      });
      await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
    }
  });
});
