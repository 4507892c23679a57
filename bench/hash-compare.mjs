// Argon2id in Node: the WebAssembly build the service uses (@phi-ag/argon2) against the pure-JS
// implementation it replaced (@noble/hashes), at the service's parameters. See bench/README.md.
//
//   node bench/hash-compare.mjs [--runs 10] [--warmup 3]     standalone, prints a table and JSON
//   npm run bench                                            runs it first and records it in latest.json
//
// Both implementations must produce the same bytes for the same password and salt (asserted),
// and @noble/hashes must match the Argon2id test vector of RFC 9106 §5.3, so the two agree on
// Argon2id rather than on a shared mistake.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { argon2id } from "@noble/hashes/argon2.js";
import initializeArgon2 from "@phi-ag/argon2/node";
import { percentile, round } from "./load.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");

/** The production parameters (wrangler.jsonc: ARGON2_MEMORY_KIB, ARGON2_ITERATIONS; p=1), 32-byte output as src/auth/password.ts. */
export const PARAMS = { memoryKib: 19456, iterations: 2, parallelism: 1, hashLength: 32 };

// RFC 9106 §5.3 (Argon2id, version 0x13): password 32 × 0x01, salt 16 × 0x02, secret 8 × 0x03,
// associated data 12 × 0x04, m=32, t=3, p=4, 32-byte tag.
const RFC9106_ARGON2ID_TAG = "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659";

async function version(pkg) {
  const json = JSON.parse(await readFile(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8"));
  return json.version;
}

const hex = (bytes) => Buffer.from(bytes).toString("hex");

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    runs: sorted.length,
    medianMs: round(percentile(sorted, 50), 1),
    p90Ms: round(percentile(sorted, 90), 1),
    minMs: round(sorted[0], 1),
    maxMs: round(sorted[sorted.length - 1], 1),
    samplesMs: samples.map((x) => round(x, 1)),
  };
}

/**
 * Times both implementations at `params`: `warmup` unrecorded hashes each, then `runs` timed
 * hashes each, alternating wasm and noble so machine noise falls on both alike. Each hash uses a
 * fresh random salt (as hashPassword does); wall-clock time of the synchronous call.
 */
export async function compareHashes({ runs = 10, warmup = 3, params = PARAMS } = {}) {
  const wasm = await initializeArgon2();
  const viaWasm = (password, salt) =>
    wasm.hash(password, {
      salt,
      hashLength: params.hashLength,
      timeCost: params.iterations,
      memoryCost: params.memoryKib,
      parallelism: params.parallelism,
      type: 2, // Argon2id
      version: 19, // 0x13
    }).hash;
  const viaNoble = (password, salt) =>
    argon2id(password, salt, { m: params.memoryKib, t: params.iterations, p: params.parallelism, dkLen: params.hashLength });

  // Correctness first: the reference vector, then the same bytes from both at the bench parameters.
  const rfc = argon2id(new Uint8Array(32).fill(1), new Uint8Array(16).fill(2), {
    m: 32,
    t: 3,
    p: 4,
    dkLen: 32,
    key: new Uint8Array(8).fill(3),
    personalization: new Uint8Array(12).fill(4),
  });
  assert.equal(hex(rfc), RFC9106_ARGON2ID_TAG, "@noble/hashes argon2id does not match the RFC 9106 test vector");
  // The bytes hashed: ASCII passwords (the timed one among them) must agree exactly.
  for (const [password, salt] of [
    ["violet-kettle-47-orbit", new Uint8Array(16).fill(7)],
    ["bench-password-not-secret", crypto.getRandomValues(new Uint8Array(16))],
  ]) {
    const a = viaWasm(password, salt);
    assert.equal(a.length, params.hashLength);
    assert.equal(hex(a), hex(viaNoble(password, salt)), `@phi-ag/argon2 and @noble/hashes disagree for salt ${hex(salt)}`);
  }
  const nonAscii = checkNonAscii(viaWasm, viaNoble);
  const time = (fn) => {
    const salt = crypto.getRandomValues(new Uint8Array(16));
    const started = performance.now();
    fn("violet-kettle-47-orbit", salt);
    return performance.now() - started;
  };
  for (let i = 0; i < warmup; i++) {
    time(viaWasm);
    time(viaNoble);
  }
  const wasmMs = [];
  const nobleMs = [];
  for (let i = 0; i < runs; i++) {
    wasmMs.push(time(viaWasm));
    nobleMs.push(time(viaNoble));
  }
  const wasmStats = stats(wasmMs);
  const nobleStats = stats(nobleMs);
  return {
    params: { m: params.memoryKib, t: params.iterations, p: params.parallelism, dkLen: params.hashLength },
    runtime: `Node ${process.version} (V8 ${process.versions.v8})`,
    warmup,
    sameBytesAscii: true,
    rfc9106VectorNoble: true,
    nonAscii,
    implementations: {
      "@phi-ag/argon2": { version: await version("@phi-ag/argon2"), kind: "WebAssembly (SIMD)", ...wasmStats },
      "@noble/hashes": { version: await version("@noble/hashes"), kind: "pure JavaScript", ...nobleStats },
    },
    speedup: round(nobleStats.medianMs / wasmStats.medianMs, 1),
  };
}

/**
 * Non-ASCII passwords. @phi-ag/argon2 0.5.28 copies the UTF-8 bytes of the password to the wasm
 * heap but passes the JavaScript string's length (UTF-16 code units) as the password length
 * (dist/index.js, tryHash: `argon2_hash(..., passwordPtr.ptr, password.length, ...)`), so only
 * the first `password.length` UTF-8 bytes are hashed. This check tells that diagnosis apart from
 * any other disagreement: an unexplained difference throws; the known truncation is recorded (and
 * printed as a warning) with a pair of different passwords that hash alike, so the day the
 * library is fixed or replaced this reports `sameBytes: true` on its own.
 */
function checkNonAscii(viaWasm, viaNoble) {
  const salt = new Uint8Array(16).fill(9);
  const utf8 = (s) => new TextEncoder().encode(s);
  const cases = ["pässwörd-über-alles", "сорока-ворона-99", "密码很长很长很长很长很长", "emoji-🔑🔑🔑-key"].map((password) => {
    const wasm = hex(viaWasm(password, salt));
    const bytes = utf8(password);
    const outcome =
      wasm === hex(viaNoble(bytes, salt))
        ? "same bytes"
        : wasm === hex(viaNoble(bytes.subarray(0, password.length), salt))
          ? "truncated to the UTF-16 length"
          : "differs";
    return { password, chars: [...password].length, utf16Length: password.length, utf8Bytes: bytes.length, outcome };
  });
  const unexplained = cases.filter((c) => c.outcome === "differs");
  assert.equal(
    unexplained.length,
    0,
    `@phi-ag/argon2 and @noble/hashes disagree on ${unexplained.map((c) => JSON.stringify(c.password)).join(", ")} for an unknown reason`,
  );
  const truncated = cases.filter((c) => c.outcome !== "same bytes");
  // "сорока-ворона-99" is 16 UTF-16 units and 28 UTF-8 bytes: only "сорока-в" and the first byte of
  // the next "о" are hashed, so any 16-unit password with those 16 bytes first verifies against it.
  const pair = ["сорока-ворона-99", "сорока-во1234567"];
  const collides = hex(viaWasm(pair[0], salt)) === hex(viaWasm(pair[1], salt));
  return {
    sameBytes: truncated.length === 0,
    finding: truncated.length
      ? "@phi-ag/argon2 hashes only the first `password.length` (UTF-16 units) UTF-8 bytes of a password: non-ASCII passwords lose their tail"
      : null,
    cases,
    collision: { passwords: pair, sameHashUnderWasm: collides },
  };
}

export function formatHashCompare(result, { budgetMs = 100 } = {}) {
  const { m, t, p, dkLen } = result.params;
  const header = ["implementation", "version", "kind", "median ms", "p90 ms", "min ms", "max ms", "runs", `≤ ${budgetMs} ms`];
  const body = Object.entries(result.implementations).map(([name, r]) => [
    name,
    r.version,
    r.kind,
    r.medianMs.toFixed(1),
    r.p90Ms.toFixed(1),
    r.minMs.toFixed(1),
    r.maxMs.toFixed(1),
    String(r.runs),
    r.p90Ms <= budgetMs ? "yes" : "no",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  return [
    `Argon2id per hash in ${result.runtime}, m=${m} KiB, t=${t}, p=${p}, ${dkLen}-byte output; ${result.warmup} warm-up + ${Object.values(result.implementations)[0].runs} timed runs each, alternating`,
    line(header),
    line(widths.map((w) => "-".repeat(w))),
    ...body.map(line),
    `same bytes from both for ASCII passwords and the same salt: yes (asserted); @noble/hashes matches RFC 9106 §5.3: yes (asserted); speedup ×${result.speedup} (medians)`,
    ...nonAsciiLines(result.nonAscii),
  ].join("\n");
}

function nonAsciiLines(nonAscii) {
  if (nonAscii.sameBytes) return ["non-ASCII passwords: same bytes from both"];
  return [
    `WARNING: ${nonAscii.finding}.`,
    ...nonAscii.cases.map(
      (c) => `  ${JSON.stringify(c.password)}: ${c.utf16Length} UTF-16 units, ${c.utf8Bytes} UTF-8 bytes -> ${c.outcome}`,
    ),
    `  ${nonAscii.collision.passwords.map((p) => JSON.stringify(p)).join(" and ")} hash alike under @phi-ag/argon2: ${nonAscii.collision.sameHashUnderWasm ? "yes" : "no"}`,
  ];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: "string" }, warmup: { type: "string" } } });
  const result = await compareHashes({ runs: Number(values.runs ?? 10), warmup: Number(values.warmup ?? 3) });
  console.log(formatHashCompare(result));
  console.log(JSON.stringify(result, null, 2));
}
