// Publishes the Cloudflare edge rules in infra/edge-rules.json (rate limit on /v1/auth/, geo block
// on /v1/admin/) through the Rulesets API. Background and review steps: docs/edge-rules.md.
//
//   node scripts/apply-edge-rules.mjs              dry run: print each request, send nothing
//   CLOUDFLARE_API_TOKEN=… CLOUDFLARE_ZONE_ID=… node scripts/apply-edge-rules.mjs --apply
//   --default-responses                            drop the custom block bodies (Free plan)
//
// Each call PUTs a phase entry point, which replaces every rule in that phase.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const API = "https://api.cloudflare.com/client/v4";
const CONFIG_URL = new URL("../infra/edge-rules.json", import.meta.url);
/** Stands for the high-risk location test in a rule expression; filled in from `high_risk_countries`. */
export const COUNTRIES_PLACEHOLDER = "{{high_risk_countries}}";
/** Cloudflare's pseudo-code for Tor exit nodes. */
const TOR = "T1";

/**
 * The Rules-language test for "the client is in a listed location". Tor (`T1`) is documented as a
 * value of `ip.src.continent`, so when it is listed it is matched there as well as in the set.
 */
export function highRiskMatch(codes) {
  if (!Array.isArray(codes) || codes.length === 0) throw new Error("high_risk_countries must be a non-empty array");
  for (const code of codes) {
    if (typeof code !== "string" || !(/^[A-Z]{2}$/.test(code) || code === TOR)) {
      throw new Error(`high_risk_countries: ${JSON.stringify(code)} is not a two-letter upper-case code or ${TOR}`);
    }
  }
  if (new Set(codes).size !== codes.length) throw new Error("high_risk_countries has duplicates");
  const set = `ip.src.country in {${codes.map((code) => `"${code}"`).join(" ")}}`;
  return codes.includes(TOR) ? `(${set} or ip.src.continent eq "${TOR}")` : set;
}

/**
 * The request bodies, one per phase, in file order: `{ phase, body: { description, rules } }`.
 * `customResponses: false` removes `action_parameters` (custom block responses need a paid plan).
 */
export function buildPhaseBodies(config, { customResponses = true } = {}) {
  const match = highRiskMatch(config.high_risk_countries);
  return Object.entries(config.phases).map(([phase, { description, rules }]) => {
    if (typeof description !== "string" || !Array.isArray(rules) || rules.length === 0) {
      throw new Error(`${phase}: needs a description and at least one rule`);
    }
    const built = rules.map((rule) => {
      if (typeof rule.expression !== "string") throw new Error(`${phase}: every rule needs an expression`);
      const out = structuredClone(rule);
      out.expression = rule.expression.replaceAll(COUNTRIES_PLACEHOLDER, match);
      if (out.expression.includes("{{")) throw new Error(`${phase}: unknown placeholder in ${rule.expression}`);
      if (!customResponses) delete out.action_parameters;
      return out;
    });
    return { phase, body: { description, rules: built } };
  });
}

export function entrypointUrl(zoneId, phase) {
  return `${API}/zones/${zoneId}/rulesets/phases/${phase}/entrypoint`;
}

async function putPhase(token, zoneId, { phase, body }) {
  const response = await fetch(entrypointUrl(zoneId, phase), {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new Error(`${phase}: HTTP ${response.status}, not JSON: ${text.slice(0, 500)}`);
  }
  if (!response.ok || answer.success !== true) {
    throw new Error(`${phase}: HTTP ${response.status}, errors: ${JSON.stringify(answer.errors ?? answer, null, 2)}`);
  }
  const { id, version, rules = [] } = answer.result ?? {};
  console.log(`${phase}: ruleset ${id} (version ${version}) now has ${rules.length} rule(s)`);
}

async function main(args) {
  const known = new Set(["--apply", "--dry-run", "--default-responses"]);
  const unknown = args.filter((arg) => !known.has(arg));
  if (unknown.length > 0 || (args.includes("--apply") && args.includes("--dry-run"))) {
    console.error(`usage: node scripts/apply-edge-rules.mjs [--dry-run | --apply] [--default-responses]`);
    return 2;
  }
  const config = JSON.parse(readFileSync(CONFIG_URL, "utf8"));
  const calls = buildPhaseBodies(config, { customResponses: !args.includes("--default-responses") });
  const token = process.env.CLOUDFLARE_API_TOKEN;
  const zoneId = process.env.CLOUDFLARE_ZONE_ID;

  if (!args.includes("--apply") || !token || !zoneId) {
    console.log(`# Dry run for zone ${config.zone_host}; nothing is sent.`);
    for (const { phase, body } of calls) {
      console.log(`\nPUT ${entrypointUrl("<zone_id>", phase)}\n${JSON.stringify(body, null, 2)}`);
    }
    if (args.includes("--apply")) {
      console.error("\n--apply needs CLOUDFLARE_API_TOKEN and CLOUDFLARE_ZONE_ID; nothing was applied.");
      return 1;
    }
    return 0;
  }
  if (!/^[0-9a-f]{32}$/.test(zoneId)) {
    console.error("CLOUDFLARE_ZONE_ID must be the zone's 32-character hex id.");
    return 2;
  }
  for (const call of calls) await putPhase(token, zoneId, call);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
