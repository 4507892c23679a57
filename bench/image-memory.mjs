// Peak memory and time of the JPEG toolkit (src/lib/images) on camera-size images, in Node: what a
// 24-megapixel upload costs `orientJpeg` (lossless rotation) and `decodeJpegScaled` (thumbnails)
// against the 128 MB a Worker isolate may use.
//
//   node bench/image-memory.mjs [--json] [--size 6000x4000] [--dense] [--only orient,scaled-2] [--src DIR]
//
// --dense makes the synthetic files about twice as large (near the 20 MiB upload limit at 24 MP).
// --src bundles the library from another copy of src/lib/images (an older commit, say, to compare).
//
// The library is bundled with esbuild twice: as is (for timing) and with every typed-array
// constructor wrapped so that each allocation samples `process.memoryUsage()` (heapUsed +
// arrayBuffers): live memory peaks right after an allocation, so sampling there catches the peak.
// Each case runs in a fresh `node --expose-gc` process (one for time, one for memory), after a GC,
// with the input already loaded; peaks are reported above that baseline, i.e. above the input.
// The same process also reports its peak RSS above the baseline (VmHWM, reset through
// /proc/self/clear_refs), with glibc told to give large blocks back to the system on free.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { synthBaseline, synthFrame, synthProgressive } from "./jpeg-synth.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const MB = 1024 * 1024;

const PROBE = `
const state = { peak: 0, samples: 0 };
globalThis.__imageMemory = state;
const sample = () => {
  const m = process.memoryUsage();
  const v = m.heapUsed + m.arrayBuffers;
  state.samples++;
  if (v > state.peak) state.peak = v;
};
const wrap = (Base) => class extends Base { constructor(...args) { super(...args); sample(); } };
export const Uint8Array = wrap(globalThis.Uint8Array);
export const Int8Array = wrap(globalThis.Int8Array);
export const Uint16Array = wrap(globalThis.Uint16Array);
export const Int16Array = wrap(globalThis.Int16Array);
export const Uint32Array = wrap(globalThis.Uint32Array);
export const Int32Array = wrap(globalThis.Int32Array);
export const Float32Array = wrap(globalThis.Float32Array);
export const Float64Array = wrap(globalThis.Float64Array);
`;

/** Bundles the library entry points into `dir`: plain.mjs and probed.mjs. */
async function bundle(dir, IMAGES) {
  const lines = [
    `export { orientJpeg } from ${JSON.stringify(path.join(IMAGES, "jpeg-orient.ts"))};`,
    `export { encodeBaselineJpeg, buildHuffmanCode, IDENTITY_ORDER, IDENTITY_SIGN } from ${JSON.stringify(path.join(IMAGES, "jpeg-encode.ts"))};`,
    `export { ZIGZAG } from ${JSON.stringify(path.join(IMAGES, "jpeg-parse.ts"))};`,
  ];
  const scaled = path.join(IMAGES, "jpeg-decode-scaled.ts");
  if (existsSync(scaled)) lines.push(`export { decodeJpegScaled } from ${JSON.stringify(scaled)};`);
  const probe = path.join(dir, "probe.mjs");
  writeFileSync(probe, PROBE);
  const common = {
    stdin: { contents: lines.join("\n"), resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "error",
  };
  await build({ ...common, outfile: path.join(dir, "plain.mjs") });
  await build({ ...common, outfile: path.join(dir, "probed.mjs"), inject: [probe] });
}

const statusKiB = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
const sha = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);

/** Child side: one operation on one input file, measured; prints one JSON line. */
async function child(spec) {
  const lib = await import(path.join(spec.dir, spec.probe ? "probed.mjs" : "plain.mjs"));
  const input = new Uint8Array(readFileSync(spec.input));
  const run = spec.op === "orient" ? () => lib.orientJpeg(input, spec.arg) : () => lib.decodeJpegScaled(input, spec.arg);
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m0 = process.memoryUsage();
  const base = m0.heapUsed + m0.arrayBuffers;
  let hwmReset = true;
  try {
    writeFileSync("/proc/self/clear_refs", "5");
  } catch {
    hwmReset = false;
  }
  const rss0 = statusKiB("VmRSS");
  const state = globalThis.__imageMemory;
  if (state) state.peak = 0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const out = run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const m1 = process.memoryUsage();
  const peak = Math.max(state?.peak ?? 0, m1.heapUsed + m1.arrayBuffers);
  const result = {
    ms: Math.round(ms),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakAboveInputMB: state ? +((peak - base) / MB).toFixed(1) : null,
    samples: state?.samples ?? 0,
    rssPeakAboveStartMB: hwmReset ? +(((statusKiB("VmHWM") - rss0) * 1024) / MB).toFixed(1) : null,
    output:
      spec.op === "orient"
        ? `${out.width}x${out.height} ${(out.bytes.length / MB).toFixed(1)} MB`
        : `${out.width}x${out.height}x${out.channels}`,
    outputSha: sha(spec.op === "orient" ? out.bytes : out.pixels),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function runChild(spec) {
  const res = spawnSync(process.execPath, ["--expose-gc", import.meta.filename, "--child", JSON.stringify(spec)], {
    encoding: "utf8",
    // Large blocks through mmap, so that freed buffers leave the RSS (the RSS peak then tracks what was live).
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: "65536", MALLOC_TRIM_THRESHOLD_: "65536" },
    maxBuffer: 1 << 20,
  });
  if (res.status !== 0) return { error: (res.stderr || res.stdout).trim().split("\n").slice(-3).join(" ") };
  return JSON.parse(res.stdout.trim().split("\n").pop());
}

async function main() {
  const { values } = parseArgs({
    options: {
      json: { type: "boolean", default: false },
      size: { type: "string", default: "6000x4000" },
      only: { type: "string" },
      dense: { type: "boolean", default: false },
      src: { type: "string", default: path.join(ROOT, "src/lib/images") },
      child: { type: "string" },
    },
  });
  if (values.child) return child(JSON.parse(values.child));
  const [width, height] = values.size.split("x").map(Number);
  const only = values.only ? values.only.split(",") : undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), "image-memory-"));
  try {
    await bundle(dir, path.resolve(values.src));
    const lib = await import(path.join(dir, "plain.mjs"));
    const inputs = [];
    for (const sampling of ["444", "420"]) {
      for (const mode of ["baseline", "progressive"]) {
        const frame = synthFrame(lib, width, height, sampling, values.dense);
        const bytes = mode === "baseline" ? synthBaseline(lib, frame) : synthProgressive(lib, frame);
        const file = path.join(dir, `${sampling}-${mode}.jpg`);
        writeFileSync(file, bytes);
        inputs.push({ name: `${sampling} ${mode}${values.dense ? " dense" : ""}`, file, mb: +(bytes.length / MB).toFixed(1) });
      }
    }
    const ops = [["orient", 6]];
    if (lib.decodeJpegScaled) ops.push(["scaled", 2], ["scaled", 4], ["scaled", 8]);
    const rows = [];
    for (const input of inputs) {
      for (const [op, arg] of ops) {
        const label = op === "orient" ? `orientJpeg(, ${arg})` : `decodeJpegScaled(, ${arg})`;
        if (only && !only.some((o) => o === op || o === `${op}-${arg}`)) continue;
        const spec = { dir, input: input.file, op, arg };
        const time = runChild({ ...spec, probe: false });
        const memory = runChild({ ...spec, probe: true });
        rows.push({ input: `${width}x${height} ${input.name}`, inputMB: input.mb, call: label, time, memory });
      }
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ node: process.version, size: `${width}x${height}`, rows }, null, 2)}\n`);
      return;
    }
    console.log(`Node ${process.version}, ${width}x${height}, library from ${path.relative(ROOT, path.resolve(values.src)) || "."}`);
    console.log("peak heap+AB: heapUsed + arrayBuffers sampled at every typed-array allocation; peak RSS: VmHWM;");
    console.log("both above the baseline with the input loaded (MB = 2^20 bytes); CPU ms includes V8's helper threads\n");
    const head = ["input", "in MB", "call", "wall ms", "CPU ms", "peak heap+AB", "peak RSS", "output", "sha"];
    const table = rows.map((r) => [
      r.input,
      String(r.inputMB),
      r.call,
      String(r.time.ms ?? r.time.error),
      String(r.time.cpuMs ?? ""),
      String(r.memory.peakAboveInputMB ?? r.memory.error),
      String(r.memory.rssPeakAboveStartMB ?? "n/a"),
      r.time.output ?? "",
      r.time.outputSha ?? "",
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
    for (const row of [head, ...table]) console.log(row.map((c, i) => c.padEnd(widths[i])).join("  "));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
