import { describe, expect, it } from "vitest";
import { overBudget, startupBusyMs, uploadSizes } from "../../scripts/budget/budget-core.mjs";

// The measurements of `npm run check:budget` (scripts/check-budget.mjs), which CI runs.

/** A V8 CPU profile as `wrangler check startup` writes it: nodes, the node of each sample, microseconds between samples. */
function profile(samples: [string, number][]) {
  const names = [...new Set(samples.map(([name]) => name))];
  return {
    nodes: names.map((name, i) => ({ id: i + 1, callFrame: { functionName: name, url: "index.js", lineNumber: 1 } })),
    startTime: 0,
    endTime: samples.reduce((sum, [, us]) => sum + us, 0),
    samples: samples.map(([name]) => names.indexOf(name) + 1),
    timeDeltas: samples.map(([, us]) => us),
  };
}

describe("startup and size budget", () => {
  it("counts the time the isolate was busy, not the idle samples", () => {
    const measured = profile([
      ["(idle)", 400_000],
      ["init", 90_000],
      ["(garbage collector)", 10_000],
      ["(program)", 5_000],
      ["(idle)", 200_000],
    ]);
    expect(startupBusyMs(measured)).toBe(105);
  });

  it("reads wrangler's upload sizes", () => {
    const output = "Total Upload: 4592.74 KiB / gzip: 1481.67 KiB\nYour Worker has access to the following bindings:";
    expect(uploadSizes(output)).toEqual({ uploadKib: 4592.74, gzipKib: 1481.67 });
    expect(() => uploadSizes("Worker built")).toThrow();
  });

  it("fails a start or a bundle over its budget, and passes both within", () => {
    const budgets = { startup_ms: 300, bundle_gzip_kib: 3072 };
    expect(overBudget({ startupMs: 150, gzipKib: 1482 }, budgets)).toEqual([]);
    expect(overBudget({ startupMs: 300, gzipKib: 3072 }, budgets)).toEqual([]);
    expect(overBudget({ startupMs: 301, gzipKib: 1482 }, budgets)).toEqual([{ name: "startup_ms", measured: 301, budget: 300 }]);
    expect(overBudget({ startupMs: 150, gzipKib: 3100 }, budgets)).toEqual([{ name: "bundle_gzip_kib", measured: 3100, budget: 3072 }]);
  });

  it("refuses a file that is not a CPU profile", () => {
    expect(() => startupBusyMs({ nodes: [] })).toThrow("not a CPU profile");
  });
});
