import { describe, expect, it } from "vitest";
import { createLogger, maskEmail, scrub, scrubText } from "../../../src/lib/logger";

describe("scrubText", () => {
  it.each([
    ["an email address", "sent to jane.doe@example.org", "sent to j***@example.org"],
    ["a link's fragment", "open https://app.example/verify#token=abc123", "open https://app.example/verify"],
    ["a link's query", "GET https://x.example/reset?token=abc&e=1 done", "GET https://x.example/reset done"],
    ["a bearer credential", "Authorization: Bearer abc.def-ghi", "Authorization: Bearer [redacted]"],
    ["a JWT anywhere", "token eyJhbGciOi.eyJzdWIiOjF9.sig", "token [redacted-jwt]"],
    [
      "the bound values a query error quotes",
      "Failed query: insert into users values (?, ?)\nparams: $argon2id$v=19$m=1$abc,x@y.org",
      "Failed query: insert into users values (?, ?)\nparams: [redacted]",
    ],
    ["a native-scheme link's fragment", "relab://login#status=mfa_required&mfa_handoff=h1", "relab://login"],
    ["a relative link's query", "see /reset-password?token=abc now", "see /reset-password now"],
    ["a non-ASCII address", "from jörg.müller@exämple.de", "from j***@exämple.de"],
    [
      "bound values spread over several lines, keeping the stack",
      "Error: Failed query: insert into t values (?)\nparams: first line\nsecond line,$argon2id$x\n    at f (a.js:1:1)",
      "Error: Failed query: insert into t values (?)\nparams: [redacted]\n    at f (a.js:1:1)",
    ],
  ])("removes %s", (_, input, output) => {
    expect(scrubText(input)).toBe(output);
  });

  it("leaves ordinary text alone", () => {
    expect(scrubText("GET /v1/units 200 in 3 ms")).toBe("GET /v1/units 200 in 3 ms");
  });
});

describe("scrub", () => {
  it("redacts members named like secrets at any depth", () => {
    expect(
      scrub({
        password: "hunter2hunter2",
        nested: { refresh_token: "r", apiKey: "k", mfa_code: "123456", cookie: "c" },
        list: [{ current_password: "p" }],
        error_code: "VALIDATION_FAILED",
      }),
    ).toEqual({
      password: "[redacted]",
      nested: { refresh_token: "[redacted]", apiKey: "[redacted]", mfa_code: "[redacted]", cookie: "[redacted]" },
      list: [{ current_password: "[redacted]" }],
      error_code: "VALIDATION_FAILED",
    });
  });

  it("redacts key, credential and one-time-code members but not error codes", () => {
    expect(scrub({ data_encryption_key: "k", credential: "c", code: "123456", error_code: "NOT_FOUND", keyboard: "ok" })).toEqual({
      data_encryption_key: "[redacted]",
      credential: "[redacted]",
      code: "[redacted]",
      error_code: "NOT_FOUND",
      keyboard: "ok",
    });
  });

  it("renders dates, URLs and headers instead of flattening them to {}", () => {
    expect(
      scrub({
        at: new Date(0),
        link: new URL("https://app.example/verify?token=t"),
        headers: new Headers({ authorization: "Bearer x", "content-type": "application/json" }),
      }),
    ).toEqual({
      at: "1970-01-01T00:00:00.000Z",
      link: "https://app.example/verify",
      headers: { authorization: "[redacted]", "content-type": "application/json" },
    });
  });

  it("reduces errors to name, message, stack and cause, scrubbed", () => {
    const error = new Error("user a.b@example.org not found", { cause: new Error("D1_ERROR: no such table: x") });
    const scrubbed = scrub(error) as Record<string, string> & { cause: Record<string, string> };
    expect(scrubbed.name).toBe("Error");
    expect(scrubbed.message).toBe("user a***@example.org not found");
    expect(scrubbed.stack).not.toContain("a.b@example.org");
    expect(scrubbed.cause.message).toBe("D1_ERROR: no such table: x");
  });
});

describe("createLogger", () => {
  it("writes one JSON object per line with level, message and base fields", () => {
    const lines: [string, string][] = [];
    const log = createLogger({ request_id: "r1" }, (level, line) => lines.push([level, line]));
    log.child({ user_id: 7 }).warn("something for x@example.org", { token: "t" });
    expect(lines).toHaveLength(1);
    const [level, line] = lines[0]!;
    expect(level).toBe("warn");
    expect(JSON.parse(line)).toEqual({
      ts: expect.any(String),
      level: "warn",
      msg: "something for x***@example.org",
      request_id: "r1",
      user_id: 7,
      token: "[redacted]",
    });
  });

  it("maskEmail keeps the first character and the domain", () => {
    expect(maskEmail("someone@relab.test")).toBe("s***@relab.test");
  });
});
