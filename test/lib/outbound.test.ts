import { describe, expect, it } from "vitest";
import { createOutboundPolicy, isAllowedUrl, OutboundError, safeFetch } from "../../src/lib/outbound";

const policy = createOutboundPolicy([
  "https://upstream.test/ok",
  "https://upstream.test/redirect",
  "https://upstream.test/slow",
  "https://api.pwnedpasswords.com/range/*",
]);

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

describe("outbound allow-list", () => {
  it.each([
    ["an exact entry", "https://upstream.test/ok", true],
    ["under a prefix", "https://api.pwnedpasswords.com/range/ABCDE", true],
    ["an exact entry plus a query", "https://upstream.test/ok?x=1", false],
    ["a sibling path", "https://upstream.test/other", false],
    ["plain http", "http://upstream.test/ok", false],
    ["credentials in the URL", "https://user:pw@upstream.test/ok", false],
    ["a look-alike host", "https://upstream.test.evil.example/ok", false],
    ["dot segments escaping the prefix", "https://api.pwnedpasswords.com/range/../admin", false],
    ["the prefix's parent", "https://api.pwnedpasswords.com/range", false],
    ["an encoded slash climbing out of the prefix", "https://api.pwnedpasswords.com/range/..%2Fadmin", false],
    ["an encoded backslash", "https://api.pwnedpasswords.com/range/x%5C..%5Cadmin", false],
    ["encoded dots", "https://api.pwnedpasswords.com/range/%2e%2e/admin", false],
  ])("%s: %s -> %s", (_, url, allowed) => {
    expect(isAllowedUrl(policy, new URL(url))).toBe(allowed);
  });

  it.each([
    ["http entries", "http://upstream.test/ok"],
    ["entries with credentials", "https://a:b@upstream.test/ok"],
    ["prefixes that do not end at a slash", "https://upstream.test/ab*"],
  ])("refuses %s at configuration time", (_, entry) => {
    expect(() => createOutboundPolicy([entry])).toThrow();
  });
});

describe("safeFetch", () => {
  it("fetches an allowed URL", async () => {
    const response = await safeFetch(policy, "https://upstream.test/ok");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ok");
  });

  it("refuses a URL off the list before any network activity", async () => {
    const error = await refusal(safeFetch(policy, "https://upstream.test/other?secret=1"));
    expect(error.reason).toBe("blocked");
    expect(error.url).toBe("https://upstream.test/other");
  });

  it("refuses something that is not a URL", async () => {
    expect((await refusal(safeFetch(policy, "not a url"))).reason).toBe("blocked");
  });

  it("does not follow redirects: the 3xx comes back as is", async () => {
    const response = await safeFetch(policy, "https://upstream.test/redirect");
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("https://upstream.test/ok");
  });

  it("gives up after its time-out", async () => {
    const error = await refusal(safeFetch(policy, "https://upstream.test/slow", {}, { timeoutMs: 100 }));
    expect(error.reason).toBe("timeout");
  });
});

describe("plain http to this machine (development's local stand-ins)", () => {
  it("is refused unless the policy allows loopback http, and then only for listed loopback URLs", () => {
    expect(() => createOutboundPolicy(["http://127.0.0.1:8790/google/token"])).toThrow();
    const local = createOutboundPolicy(["http://127.0.0.1:8790/google/token", "http://localhost:8790/youtube/*"], { loopbackHttp: true });
    expect(isAllowedUrl(local, new URL("http://127.0.0.1:8790/google/token"))).toBe(true);
    expect(isAllowedUrl(local, new URL("http://localhost:8790/youtube/v3/liveBroadcasts"))).toBe(true);
    expect(isAllowedUrl(local, new URL("http://127.0.0.1:8790/other"))).toBe(false);
    expect(() => createOutboundPolicy(["http://example.org/token"], { loopbackHttp: true })).toThrow();
  });
});
