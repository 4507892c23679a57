// Types for the parts of apply-edge-rules.mjs that the tests import.

export interface EdgeRule {
  description: string;
  expression: string;
  action: string;
  action_parameters?: { response?: { status_code: number; content_type: string; content: string } };
  ratelimit?: {
    characteristics: string[];
    period: number;
    requests_per_period: number;
    mitigation_timeout: number;
  };
  enabled: boolean;
}

export interface EdgeRulesConfig {
  zone_host: string;
  high_risk_countries: string[];
  phases: Record<string, { description: string; rules: EdgeRule[] }>;
}

export interface PhaseCall {
  phase: string;
  body: { description: string; rules: EdgeRule[] };
}

export const COUNTRIES_PLACEHOLDER: string;
export function highRiskMatch(codes: readonly string[]): string;
export function buildPhaseBodies(config: EdgeRulesConfig, options?: { customResponses?: boolean }): PhaseCall[];
export function entrypointUrl(zoneId: string, phase: string): string;
