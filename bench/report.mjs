// Medians over rounds, ratios to the baselines, the printed table and the JSON document.
import { median, round } from "./load.mjs";

export const TRIVIAL = "baseline-trivial";
export const SELECT1 = "baseline-d1-select1";

/** rounds: [{ round, runs: { [target]: runLoad result } }]; targets: [{ name, kind, d1RoundTrips, ... }] */
export function summarize(targets, rounds) {
  const rows = targets.map((t) => {
    const runs = rounds.map((r) => r.runs[t.name]).filter(Boolean);
    const failedRuns = runs.filter((r) => !r.ok);
    return {
      name: t.name,
      kind: t.kind,
      ok: failedRuns.length === 0 && !t.probeError,
      failure: describeFailure(t, runs),
      rps: round(median(runs.map((r) => r.rps)), 1),
      p50: round(median(runs.map((r) => r.p50)), 3),
      p99: round(median(runs.map((r) => r.p99)), 3),
      clientCpu: round(median(runs.map((r) => r.clientCpu)), 2),
      d1RoundTrips: t.d1RoundTrips,
      d1RoundTripsSource: t.kind === "baseline" ? "by construction" : "Server-Timing header",
    };
  });
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  // Ratios are taken inside each round, where the target and the baseline ran seconds apart on
  // the same machine state, then the median over rounds is kept: a round slowed down as a whole
  // (CPU steal on a VM, a background job) then cancels out. The ratios of the medians are kept too.
  const perRound = (name, base, key) => rounds.map((r) => ratio(r.runs[name]?.[key], r.runs[base]?.[key]));
  for (const row of rows) {
    row.perRound = {
      rpsVsTrivial: perRound(row.name, TRIVIAL, "rps"),
      rpsVsSelect1: perRound(row.name, SELECT1, "rps"),
      p99VsTrivial: perRound(row.name, TRIVIAL, "p99"),
      p99VsSelect1: perRound(row.name, SELECT1, "p99"),
    };
    row.ratios = Object.fromEntries(Object.entries(row.perRound).map(([k, v]) => [k, round(median(v), 2)]));
    row.ratiosOfMedians = {
      rpsVsTrivial: ratio(row.rps, byName[TRIVIAL]?.rps),
      rpsVsSelect1: ratio(row.rps, byName[SELECT1]?.rps),
      p99VsTrivial: ratio(row.p99, byName[TRIVIAL]?.p99),
      p99VsSelect1: ratio(row.p99, byName[SELECT1]?.p99),
    };
  }
  return rows;
}

function describeFailure(target, runs) {
  const parts = [];
  if (target.probeError) parts.push(`probe: ${target.probeError}`);
  const sum = (key) => runs.reduce((acc, r) => acc + (r[key] ?? 0), 0);
  const non2xx = sum("non2xx");
  const errors = sum("errors");
  const timeouts = sum("timeouts");
  if (non2xx) {
    const codes = {};
    for (const r of runs) for (const [c, n] of Object.entries(r.statusCounts)) if (!c.startsWith("2")) codes[c] = (codes[c] ?? 0) + n;
    parts.push(`${non2xx} non-2xx (${Object.entries(codes).map(([c, n]) => `${c}: ${n}`).join(", ")})`);
  }
  if (errors) parts.push(`${errors} connection errors`);
  if (timeouts) parts.push(`${timeouts} timeouts`);
  if (runs.some((r) => r.ok2xx === 0)) parts.push("a run completed no 2xx response");
  return parts.length ? parts.join("; ") : null;
}

function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b, 2) : null;
}

const fmt = (x, digits = 2) => (x === null || x === undefined ? "-" : Number(x).toFixed(digits));

export function formatTable(rows) {
  const header = ["target", "req/s", "p50 ms", "p99 ms", "D1 rt/req", "req/s ÷ trivial", "req/s ÷ select1", "p99 ÷ trivial", "p99 ÷ select1", ""];
  const body = rows.map((r) => [
    r.name,
    fmt(r.rps, 0),
    fmt(r.p50),
    fmt(r.p99),
    r.d1RoundTrips === null ? "?" : String(r.d1RoundTrips) + (r.kind === "baseline" ? "*" : ""),
    fmt(r.ratios.rpsVsTrivial),
    fmt(r.ratios.rpsVsSelect1),
    fmt(r.ratios.p99VsTrivial),
    fmt(r.ratios.p99VsSelect1),
    r.ok ? "" : "FAILED",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ").trimEnd();
  const out = [line(header), line(widths.map((w) => "-".repeat(w))), ...body.map(line)];
  out.push("* baselines: 0 and 1 D1 round trips per request by construction; scenarios: Server-Timing header.");
  out.push("ratios: taken within each round, median over rounds (so they need not equal the quotient of the medians).");
  const clientBound = rows.filter((r) => r.clientCpu >= 0.9).map((r) => `${r.name} (${r.clientCpu})`);
  if (clientBound.length) {
    out.push(`note: the load generator used ~a full core on ${clientBound.join(", ")}: there the client limits req/s, so ratios to it understate costs.`);
  }
  for (const r of rows) if (!r.ok) out.push(`FAILED ${r.name}: ${r.failure} — its numbers are not comparable.`);
  return out.join("\n");
}
