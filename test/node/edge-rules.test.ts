import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  buildPhaseBodies,
  COUNTRIES_PLACEHOLDER,
  type EdgeRule,
  type EdgeRulesConfig,
  entrypointUrl,
  highRiskMatch,
} from "../../scripts/apply-edge-rules.mjs";

// The Cloudflare edge rules (docs/edge-rules.md): the spec's rate limit on /v1/auth/* and its
// admin geo block, checked here as the request bodies the apply script would send.
const config = JSON.parse(readFileSync(new URL("../../infra/edge-rules.json", import.meta.url), "utf8")) as EdgeRulesConfig;
const calls = buildPhaseBodies(config);
const body = (phase: string) => calls.find((call) => call.phase === phase)!.body;
const onlyRule = (phase: string): EdgeRule => {
  const { rules } = body(phase);
  expect(rules).toHaveLength(1);
  return rules[0]!;
};

// Cloudflare's documented custom-response types for block actions, and body size caps.
const RESPONSE_TYPES = ["text/html", "text/plain", "application/json", "text/xml"];

/** The path prefix of an expression `starts_with(http.request.uri.path, "<prefix>")…`. */
function pathPrefix(expression: string): string {
  const match = /^starts_with\(http\.request\.uri\.path, "([^"]+)"\)/.exec(expression);
  expect(match, expression).not.toBeNull();
  return match![1]!;
}

function problem(rule: EdgeRule, status: number, maxBytes: number) {
  const response = rule.action_parameters!.response!;
  expect(response.status_code).toBe(status);
  expect(RESPONSE_TYPES).toContain(response.content_type);
  expect(response.content_type).toBe("application/json");
  expect(new TextEncoder().encode(response.content).length).toBeLessThanOrEqual(maxBytes);
  const parsed = JSON.parse(response.content) as Record<string, unknown>;
  expect(parsed).toMatchObject({ type: "about:blank", status });
  expect(typeof parsed.title).toBe("string");
  expect(typeof parsed.detail).toBe("string");
  return parsed;
}

describe("edge rules (infra/edge-rules.json)", () => {
  it("builds one PUT body per phase, each holding only description and rules", () => {
    expect(calls.map((call) => call.phase)).toEqual(["http_ratelimit", "http_request_firewall_custom"]);
    for (const { phase, body } of calls) {
      expect(Object.keys(body).sort()).toEqual(["description", "rules"]);
      expect(entrypointUrl("<zone_id>", phase)).toBe(
        `https://api.cloudflare.com/client/v4/zones/<zone_id>/rulesets/phases/${phase}/entrypoint`,
      );
    }
  });

  it("rate limits /v1/auth/ per IP at 10 per 10 s with a 10 s block, so retries soon succeed", () => {
    const rule = onlyRule("http_ratelimit");
    expect(rule).toMatchObject({ action: "block", enabled: true });
    expect(rule.ratelimit).toMatchObject({ period: 10, requests_per_period: 10, mitigation_timeout: 10 });
    expect(rule.ratelimit!.characteristics).toEqual(expect.arrayContaining(["ip.src", "cf.colo.id"]));
    expect(rule.ratelimit!.characteristics).toHaveLength(2);
  });

  it("rate limits the authentication paths and nothing broader", () => {
    const rule = onlyRule("http_ratelimit");
    expect(rule.expression).toBe('starts_with(http.request.uri.path, "/v1/auth/")');
    const prefix = pathPrefix(rule.expression);
    for (const path of ["/v1/auth/login", "/v1/auth/refresh", "/v1/auth/forgot-password"]) {
      expect(path.startsWith(prefix), path).toBe(true);
    }
    for (const path of ["/v1/", "/v1/units", "/v1/users/me", "/v1/authors", "/v1/admin/users", "/"]) {
      expect(path.startsWith(prefix), path).toBe(false);
    }
  });

  it("answers the rate limit with a 429 Problem Details body", () => {
    const parsed = problem(onlyRule("http_ratelimit"), 429, 30 * 1024);
    expect(parsed.code).toBe("RATE_LIMITED");
  });

  it("blocks /v1/admin/ for exactly the listed countries, from the one list in the file", () => {
    const raw = config.phases.http_request_firewall_custom!.rules[0]!.expression;
    expect(raw).toBe(`starts_with(http.request.uri.path, "/v1/admin/") and ${COUNTRIES_PLACEHOLDER}`);
    expect(JSON.stringify(config.phases)).not.toContain("ip.src.country");

    const rule = onlyRule("http_request_firewall_custom");
    expect(rule).toMatchObject({ action: "block", enabled: true });
    expect(rule.ratelimit).toBeUndefined();
    expect(pathPrefix(rule.expression)).toBe("/v1/admin/");
    expect(rule.expression).toBe(`starts_with(http.request.uri.path, "/v1/admin/") and ${highRiskMatch(config.high_risk_countries)}`);
    const set = /ip\.src\.country in \{([^}]*)\}/.exec(rule.expression)![1]!;
    expect(set.split(" ").map((code) => JSON.parse(code) as string)).toEqual(config.high_risk_countries);
    expect(rule.expression.includes('ip.src.continent eq "T1"')).toBe(config.high_risk_countries.includes("T1"));

    const parsed = problem(rule, 403, 2 * 1024);
    expect(parsed.code).toBe("REGION_BLOCKED");
  });

  it("lists each location once, as two upper-case letters or Tor's T1", () => {
    const codes = config.high_risk_countries;
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^(?:[A-Z]{2}|T1)$/);
  });

  it("builds the location test from whatever the list holds, and refuses bad codes", () => {
    expect(highRiskMatch(["RU", "BY"])).toBe('ip.src.country in {"RU" "BY"}');
    expect(highRiskMatch(["KP", "T1"])).toBe('(ip.src.country in {"KP" "T1"} or ip.src.continent eq "T1")');
    for (const bad of [[], ["kp"], ["PRK"], ["T2"], ["KP", "KP"], ['K"']]) {
      expect(() => highRiskMatch(bad), JSON.stringify(bad)).toThrow();
    }
  });

  it("can leave out the custom responses, for plans without them", () => {
    for (const { body } of buildPhaseBodies(config, { customResponses: false })) {
      for (const rule of body.rules) expect(rule).not.toHaveProperty("action_parameters");
    }
    // The file itself is not changed by building.
    expect(config.phases.http_ratelimit!.rules[0]!.action_parameters).toBeDefined();
  });
});
