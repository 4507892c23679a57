import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config";

const withVars = (vars: Record<string, string | undefined>) => loadConfig({ ...env, ...vars });

describe("configuration", () => {
  it("reads the development defaults", () => {
    const config = withVars({});
    expect(config.isDevelopment).toBe(true);
    expect(config.isProduction).toBe(false);
    expect([...config.corsOrigins].sort()).toEqual([env.APP_ORIGIN, env.DOCS_ORIGIN, env.SITE_ORIGIN].sort());
    expect(config.bootstrap).toEqual({ email: env.BOOTSTRAP_SUPERUSER_EMAIL, password: env.BOOTSTRAP_SUPERUSER_PASSWORD });
  });

  it("normalises origin lists", () => {
    const config = withVars({ APP_ORIGIN: "https://a.example/, https://b.example:8443/path", SITE_ORIGIN: "", DOCS_ORIGIN: "" });
    expect([...config.corsOrigins]).toEqual(["https://a.example", "https://b.example:8443"]);
  });

  it("refuses to guess the environment", () => {
    expect(() => withVars({ ENVIRONMENT: "" })).toThrow(ConfigError);
    expect(() => withVars({ ENVIRONMENT: undefined })).toThrow(ConfigError);
  });

  it("refuses weaker-than-OWASP Argon2id everywhere but development", () => {
    expect(() => withVars({ ENVIRONMENT: "production", ARGON2_MEMORY_KIB: "64" })).toThrow(ConfigError);
    expect(() => withVars({ ENVIRONMENT: "staging", ARGON2_ITERATIONS: "1", ARGON2_MEMORY_KIB: "19456" })).toThrow(ConfigError);
    expect(withVars({ ENVIRONMENT: "production", ARGON2_MEMORY_KIB: "19456", ARGON2_ITERATIONS: "2" }).argon2.memoryKib).toBe(19456);
  });

  it.each([
    ["a non-numeric Argon2 setting", { ARGON2_ITERATIONS: "two" }],
    ["an origin that is not a URL", { APP_ORIGIN: "app.example" }],
    ["an email provider URL that is not https", { EMAIL_PROVIDER_URL: "http://mail.example/send" }],
    ["a missing data encryption key", { DATA_ENCRYPTION_KEY: undefined }],
    ["a data encryption key of 31 bytes", { DATA_ENCRYPTION_KEY: "ab".repeat(31) }],
    ["a data encryption key that is not hex or base64", { DATA_ENCRYPTION_KEY: "not-a-key" }],
  ])("refuses %s", (_, vars) => {
    expect(() => withVars(vars)).toThrow(ConfigError);
  });

  it("reads the data encryption key as 32 bytes, and never echoes it in the error", () => {
    const ring = withVars({ DATA_ENCRYPTION_KEY: "ab".repeat(32) }).dataKey;
    expect(ring.current).toBe(0);
    expect([...ring.keys.keys()]).toEqual([0]);
    expect(ring.keys.get(0)).toHaveLength(32);
    expect(() => withVars({ DATA_ENCRYPTION_KEY: "cd".repeat(31) })).toThrow(/^DATA_ENCRYPTION_KEY must be set/);
    expect(() => withVars({ DATA_ENCRYPTION_KEY: "cd".repeat(31) })).not.toThrow(/cdcd/);
  });

  describe("key rotation (decisions.md, Key rotation)", () => {
    const zero = "ab".repeat(32);
    const one = "cd".repeat(32);
    const bytes = (hex: string) => Uint8Array.from(hex.match(/../g)!, (pair) => Number.parseInt(pair, 16));

    it("seals with the first key of DATA_ENCRYPTION_KEYS and keeps DATA_ENCRYPTION_KEY as key id 0", () => {
      const config = withVars({ DATA_ENCRYPTION_KEY: zero, DATA_ENCRYPTION_KEYS: `1:${one}` });
      expect(config.dataKey.current).toBe(1);
      expect([...config.dataKey.keys.keys()].sort()).toEqual([0, 1]);
      expect(config.pseudonymSecret).toEqual(bytes(zero));
    });

    it("derives pseudonyms from key id 0 whatever key seals, or from PSEUDONYM_KEY", () => {
      expect(withVars({ DATA_ENCRYPTION_KEY: undefined, DATA_ENCRYPTION_KEYS: `1:${one}, 0:${zero}` }).pseudonymSecret).toEqual(
        bytes(zero),
      );
      const retired = withVars({ DATA_ENCRYPTION_KEY: undefined, DATA_ENCRYPTION_KEYS: `1:${one}`, PSEUDONYM_KEY: zero });
      expect([...retired.dataKey.keys.keys()]).toEqual([1]);
      expect(retired.pseudonymSecret).toEqual(bytes(zero));
    });

    it.each([
      ["key id 0 retired without PSEUDONYM_KEY", { DATA_ENCRYPTION_KEY: undefined, DATA_ENCRYPTION_KEYS: `1:${one}` }, /PSEUDONYM_KEY/],
      ["a key id listed twice", { DATA_ENCRYPTION_KEYS: `1:${one},1:${one}` }, /listed twice/],
      ["key id 0 naming another key", { DATA_ENCRYPTION_KEY: zero, DATA_ENCRYPTION_KEYS: `1:${one},0:${one}` }, /key id 0/],
      ["an entry without an id", { DATA_ENCRYPTION_KEYS: one }, /not id:key/],
      ["a short key", { DATA_ENCRYPTION_KEYS: `2:${"ef".repeat(31)}` }, /key id 2/],
      ["an id past 65535", { DATA_ENCRYPTION_KEYS: `70000:${one}` }, /65535/],
      ["a short previous token secret", { AUTH_TOKEN_SECRET_PREVIOUS: "short" }, /AUTH_TOKEN_SECRET_PREVIOUS/],
    ])("refuses %s, naming no key", (_, vars, message) => {
      expect(() => withVars(vars)).toThrow(message);
      expect(() => withVars(vars)).not.toThrow(/abab|cdcd|efef/);
    });

    it("verifies tokens with the previous secret while it is set", () => {
      expect(withVars({}).tokenSecrets).toEqual([env.AUTH_TOKEN_SECRET]);
      const previous = "p".repeat(40);
      expect(withVars({ AUTH_TOKEN_SECRET_PREVIOUS: previous }).tokenSecrets).toEqual([env.AUTH_TOKEN_SECRET, previous]);
    });
  });

  it("needs both bootstrap email and password", () => {
    expect(withVars({ BOOTSTRAP_SUPERUSER_PASSWORD: "" }).bootstrap).toBeNull();
  });

  it("allow-lists the email provider URL exactly", () => {
    // Without the test suite's OAuth providers, whose endpoints would join the list too.
    const config = withVars({
      EMAIL_PROVIDER_URL: "https://api.resend.com/emails",
      OAUTH_GOOGLE_CLIENT_ID: "",
      OAUTH_GITHUB_CLIENT_ID: "",
    });
    expect([...config.outbound.exact]).toEqual(["https://api.resend.com/emails"]);
  });

  it("switches the request-rate limiters on unless RATE_LIMITS_ENABLED says otherwise", () => {
    expect(withVars({ RATE_LIMITS_ENABLED: undefined }).rateLimitsEnabled).toBe(true);
    expect(withVars({ RATE_LIMITS_ENABLED: "" }).rateLimitsEnabled).toBe(true);
    expect(withVars({ RATE_LIMITS_ENABLED: "   " }).rateLimitsEnabled).toBe(true);
  });

  it.each([
    ["false", false],
    ["FALSE", false],
    [" false\n", false],
    ["true", true],
    ["True", true],
    [" true ", true],
  ])("reads RATE_LIMITS_ENABLED=%j as %s", (value, enabled) => {
    expect(withVars({ RATE_LIMITS_ENABLED: value }).rateLimitsEnabled).toBe(enabled);
  });

  it.each(["no", "0", "1", "yes", "off", "disabled"])("refuses RATE_LIMITS_ENABLED=%j, naming the variable", (value) => {
    expect(() => withVars({ RATE_LIMITS_ENABLED: value })).toThrow(ConfigError);
    expect(() => withVars({ RATE_LIMITS_ENABLED: value })).toThrow('RATE_LIMITS_ENABLED must be "true" or "false"');
  });

  it("waits 1 s for the rate limiter's counter store unless RATE_LIMIT_STORE_TIMEOUT_MS says otherwise", () => {
    expect(withVars({ RATE_LIMIT_STORE_TIMEOUT_MS: undefined }).rateLimitStoreTimeoutMs).toBe(1_000);
    expect(withVars({ RATE_LIMIT_STORE_TIMEOUT_MS: "2500" }).rateLimitStoreTimeoutMs).toBe(2_500);
    expect(() => withVars({ RATE_LIMIT_STORE_TIMEOUT_MS: "0" })).toThrow("RATE_LIMIT_STORE_TIMEOUT_MS");
    expect(() => withVars({ RATE_LIMIT_STORE_TIMEOUT_MS: "soon" })).toThrow(ConfigError);
    expect(() => withVars({ RATE_LIMIT_STORE_TIMEOUT_MS: "30001" })).toThrow("RATE_LIMIT_STORE_TIMEOUT_MS must be at most 30000");
  });

  it("puts the configured providers' token, profile and revoke endpoints on the outbound allow-list, and the video API as a prefix", () => {
    const config = withVars({});
    expect([...config.outbound.exact]).toEqual(
      expect.arrayContaining([
        "https://google.oauth.test/token",
        "https://google.oauth.test/v1/userinfo",
        "https://github.oauth.test/user/emails",
      ]),
    );
    expect(config.outbound.prefixes).toContain("https://youtube.video.test/youtube/v3/");
    expect(() =>
      withVars({
        ENVIRONMENT: "production",
        ARGON2_MEMORY_KIB: "19456",
        ARGON2_ITERATIONS: "2",
        OAUTH_GOOGLE_TOKEN_URL: "http://127.0.0.1:8790/google/token",
      }),
    ).toThrow(ConfigError);
  });
});
