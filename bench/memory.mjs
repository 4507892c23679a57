// Resident memory of the workerd processes the bench starts (bench/export.mjs, bench/media.mjs):
// read from /proc, so Linux only.
import { readdirSync, readFileSync } from "node:fs";

/** Every workerd process of this Node process (Miniflare starts one per instance). */
export function workerdPids() {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("workerd")) pids.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return pids;
}

/** The process's resident memory (`VmRSS`), in KiB; 0 when it is gone. */
export function rssKiB(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    // The process is gone; the measured request reports why.
    return 0;
  }
}

/** Samples the process's resident memory every 5 ms until stopped; returns the peak (KiB). */
export function sampleMemory(pid) {
  let peak = rssKiB(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKiB(pid));
  }, 5);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssKiB(pid));
  };
}
