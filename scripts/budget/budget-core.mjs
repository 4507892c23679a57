// The measurements of the startup and size budget (scripts/check-budget.mjs), as pure functions.

/**
 * CPU time of a Worker's start from a `wrangler check startup` profile (a V8 .cpuprofile): the
 * sampled time the isolate was not idle, in milliseconds. Idle samples are the profiler waiting
 * for the runtime, which neither Cloudflare's limit nor the code's cost counts.
 */
export function startupBusyMs(profile) {
  if (!Array.isArray(profile?.nodes) || !Array.isArray(profile.samples) || !Array.isArray(profile.timeDeltas)) {
    throw new Error("not a CPU profile (nodes, samples, timeDeltas)");
  }
  const idle = new Set(profile.nodes.filter((node) => node.callFrame?.functionName === "(idle)").map((node) => node.id));
  let busy = 0;
  profile.samples.forEach((sample, i) => {
    if (!idle.has(sample)) busy += profile.timeDeltas[i] ?? 0;
  });
  return busy / 1000;
}

/** The upload sizes wrangler prints on a (dry-run) deploy: `Total Upload: 4592.74 KiB / gzip: 1481.67 KiB`. */
export function uploadSizes(output) {
  const match = /Total Upload:\s*([\d.]+)\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(output);
  if (!match) throw new Error("wrangler printed no upload size");
  return { uploadKib: Number(match[1]), gzipKib: Number(match[2]) };
}

/** What exceeds its budget: `[{ name, measured, budget }]` (empty: within every budget). */
export function overBudget(measured, budgets) {
  const over = [];
  if (measured.startupMs > budgets.startup_ms) over.push({ name: "startup_ms", measured: measured.startupMs, budget: budgets.startup_ms });
  if (measured.gzipKib > budgets.bundle_gzip_kib)
    over.push({ name: "bundle_gzip_kib", measured: measured.gzipKib, budget: budgets.bundle_gzip_kib });
  return over;
}
