// What one access-token check costs (src/auth/tokens.ts readAccessToken, the work every signed-in
// request does before it reaches D1), in Node and in workerd. Not part of `npm run bench`.
//
//   node bench/token-check.mjs [--checks 10000] [--rounds 5]
//
// The module is bundled from src/ with esbuild. In Node, `checks` verifications of one valid token
// are timed in a loop. In workerd (Miniflare, one instance) time does not advance while a request
// computes, so the loop runs inside a request and is timed from Node: the request with `checks`
// verifications minus the same request with none. Each figure is the median over `rounds` rounds
// after one unrecorded round; both are µs per check.
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { Miniflare } from "miniflare";

const ROOT = path.resolve(import.meta.dirname, "..");
const SECRET = "bench-token-secret-0123456789abcdef0123456789abcdef";

const { values } = parseArgs({ options: { checks: { type: "string", default: "10000" }, rounds: { type: "string", default: "5" } } });
const CHECKS = Number(values.checks);
const ROUNDS = Number(values.rounds);

// Works with a synchronous or an asynchronous readAccessToken/signAccessToken (`await` on a plain value is that value).
const ENTRY = `
import { readAccessToken, signAccessToken } from "./src/auth/tokens.ts";
const SECRET = ${JSON.stringify(SECRET)};
const now = () => Math.floor(Date.now() / 1000);
export async function newToken() {
  return signAccessToken(SECRET, { userId: 42, sessionId: "bench-session", issuedAtMs: Date.now(), expiresAt: now() + 900 });
}
export async function check(token, checks) {
  const nowSeconds = now();
  for (let i = 0; i < checks; i++) {
    if (!(await readAccessToken(SECRET, token, nowSeconds))) throw new Error("a valid token was refused");
  }
}
export default {
  async fetch(request) {
    const checks = Number(new URL(request.url).searchParams.get("checks"));
    await check(await newToken(), checks);
    return new Response("ok");
  },
};
`;

async function bundle(platform) {
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: platform === "node" ? "node" : "neutral",
    conditions: platform === "node" ? [] : ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
const perCheckUs = (ms) => Math.round(((ms * 1000) / CHECKS) * 100) / 100;

async function inNode() {
  const module = await import(`data:text/javascript,${encodeURIComponent(await bundle("node"))}`);
  const token = await module.newToken();
  const samples = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const started = performance.now();
    await module.check(token, CHECKS);
    if (round > 0) samples.push(performance.now() - started);
  }
  return perCheckUs(median(samples));
}

async function inWorkerd() {
  const mf = new Miniflare({ modules: true, script: await bundle("workerd"), compatibilityDate: "2026-04-26" });
  try {
    const timed = async (checks) => {
      const started = performance.now();
      const response = await mf.dispatchFetch(`http://bench.local/?checks=${checks}`);
      if (response.status !== 200) throw new Error(`workerd answered ${response.status}: ${await response.text()}`);
      await response.text();
      return performance.now() - started;
    };
    const samples = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const empty = await timed(0);
      const full = await timed(CHECKS);
      if (round > 0) samples.push(full - empty);
    }
    return perCheckUs(median(samples));
  } finally {
    await mf.dispose();
  }
}

const node = await inNode();
const workerd = await inWorkerd();
console.log(`access-token check, median of ${ROUNDS} rounds of ${CHECKS}: Node ${process.version} ${node} µs, workerd ${workerd} µs`);
console.log(JSON.stringify({ checks: CHECKS, rounds: ROUNDS, nodeUsPerCheck: node, workerdUsPerCheck: workerd }));
