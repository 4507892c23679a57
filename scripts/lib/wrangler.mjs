// Runs the project's own wrangler as a child process and hands back what it printed: the Node-side
// tools that act on an account or a local state directory (setup:production, restore) go through
// it, so they use whatever credentials wrangler has (`wrangler login` or CLOUDFLARE_API_TOKEN).
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = path.join(ROOT, "node_modules", ".bin", "wrangler");

/**
 * `wrangler <args>`; resolves `{ code, stdout, stderr }` (never rejects on a non-zero exit).
 * CI=1: no prompts; no Request.cf lookup; no telemetry notice. WRANGLER_LOG=log: its output is
 * what these tools parse, so a quieter level set around them (the test runner sets "warn") must
 * not reach it.
 */
export function runWrangler(args, { env = {}, cwd = ROOT } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, {
      cwd,
      env: { ...process.env, CI: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", WRANGLER_LOG: "log", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out = [];
    const err = [];
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
  });
}

/** `runWrangler`, throwing with wrangler's output when it fails. */
export async function wrangler(args, options) {
  const result = await runWrangler(args, options);
  if (result.code !== 0) {
    throw new Error(`wrangler ${args.join(" ")} exited with ${result.code}:\n${result.stdout}\n${result.stderr}`.trim());
  }
  return result;
}

/** The JSON a wrangler run printed (it may print a banner first). Takes `runWrangler`'s result, or its stdout. */
export function jsonOutput(result) {
  const stdout = typeof result === "string" ? result : result.stdout;
  const start = stdout.search(/^[[{]/m);
  if (start === -1) {
    const stderr = typeof result === "string" ? "" : `\n${result.stderr}`;
    throw new Error(`wrangler printed no JSON:\n${stdout}${stderr}`);
  }
  return JSON.parse(stdout.slice(start));
}
