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
      expectStatus: t.expectStatus ?? "2xx",
      ok: failedRuns.length === 0 && !t.probeError,
      failure: describeFailure(t, runs),
      rps: round(median(runs.map((r) => r.rps)), 1),
      p50: round(median(runs.map((r) => r.p50)), 3),
      p99: round(median(runs.map((r) => r.p99)), 3),
      clientCpu: round(median(runs.map((r) => r.clientCpu)), 2),
      d1RoundTrips: t.d1RoundTrips,
      d1RoundTripsSource: t.kind === "baseline" ? "by construction" : "Server-Timing header",
      // Counter-store (RATE_LIMITER Durable Object) calls per request, from the probe's Server-Timing; null on a baseline.
      limiterCalls: t.kind === "baseline" ? null : (t.limiterCalls ?? null),
      instance: t.instance ?? null,
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
    row.ratios = Object.fromEntries(Object.entries(row.perRound).map(([k, v]) => [k, roundRatio(median(v))]));
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
  const expect = target.expectStatus ?? null;
  const isExpected = (code) => (expect === null ? code.startsWith("2") : code === String(expect));
  const unexpected = sum("unexpected");
  const errors = sum("errors");
  const timeouts = sum("timeouts");
  if (unexpected) {
    const codes = {};
    for (const r of runs) for (const [c, n] of Object.entries(r.statusCounts)) if (!isExpected(c)) codes[c] = (codes[c] ?? 0) + n;
    parts.push(`${unexpected} responses other than ${expect ?? "2xx"} (${Object.entries(codes).map(([c, n]) => `${c}: ${n}`).join(", ")})`);
  }
  // autocannon counts a timeout as an error too.
  if (errors - timeouts) parts.push(`${errors - timeouts} connection errors`);
  if (timeouts) parts.push(`${timeouts} timeouts`);
  if (runs.some((r) => r.expected === 0)) parts.push(`a run completed no ${expect ?? "2xx"} response`);
  return parts.length ? parts.join("; ") : null;
}

// Two decimals, but at least two significant digits: a login is a few thousandths of a trivial
// response's throughput, which two decimals would round to 0.00.
function roundRatio(x) {
  if (!Number.isFinite(x)) return null;
  return Math.abs(x) >= 0.1 || x === 0 ? round(x, 2) : Number(x.toPrecision(2));
}

function ratio(a, b) {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? roundRatio(a / b) : null;
}

const fmt = (x, digits = 2) => (x === null || x === undefined ? "-" : Number(x).toFixed(digits));
const fmtRatio = (x) => (x === null || x === undefined ? "-" : Math.abs(x) >= 0.1 || x === 0 ? x.toFixed(2) : x.toPrecision(2));

export function formatTable(rows) {
  const header = ["target", "req/s", "p50 ms", "p99 ms", "D1 rt/req", "limiter calls", "req/s ÷ trivial", "req/s ÷ select1", "p99 ÷ trivial", "p99 ÷ select1", ""];
  const body = rows.map((r) => [
    r.expectStatus === "2xx" ? r.name : `${r.name} [${r.expectStatus}]`,
    fmt(r.rps, 0),
    fmt(r.p50),
    fmt(r.p99),
    r.d1RoundTrips === null ? "?" : String(r.d1RoundTrips) + (r.kind === "baseline" ? "*" : ""),
    r.kind === "baseline" ? "-" : r.limiterCalls === null ? "?" : String(r.limiterCalls),
    fmtRatio(r.ratios.rpsVsTrivial),
    fmtRatio(r.ratios.rpsVsSelect1),
    fmtRatio(r.ratios.p99VsTrivial),
    fmtRatio(r.ratios.p99VsSelect1),
    r.ok ? "" : "FAILED",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ").trimEnd();
  const out = [line(header), line(widths.map((w) => "-".repeat(w))), ...body.map(line)];
  out.push("* baselines: 0 and 1 D1 round trips per request by construction; scenarios: Server-Timing header (d1, and limiter: counter-store calls).");
  out.push("ratios: taken within each round, median over rounds (so they need not equal the quotient of the medians).");
  if (rows.some((r) => r.expectStatus !== "2xx")) {
    out.push("[NNN]: a scenario that measures an error path; every response must have that status (any other is a failure).");
  }
  const clientBound = rows.filter((r) => r.clientCpu >= 0.9).map((r) => `${r.name} (${r.clientCpu})`);
  if (clientBound.length) {
    out.push(`note: the load generator used ~a full core on ${clientBound.join(", ")}: there the client limits req/s, so ratios to it understate costs.`);
  }
  for (const r of rows) if (!r.ok) out.push(`FAILED ${r.name}: ${r.failure} — its numbers are not comparable.`);
  return out.join("\n");
}

/**
 * What the rate limiter costs a read: `units` (limits on) against `units-no-limits` (the same
 * bundle on a second instance with RATE_LIMITS_ENABLED=false), both in every round. Ratios are
 * taken within each round (on ÷ off) and the median kept; the throughput cost is 1 - that ratio.
 * The aims (product issue): at most one counter-store round trip per read, under 25 % throughput
 * cost. Reported, never a reason to fail the run.
 */
export function summarizeLimiter(rows, rounds, { on = "units", off = "units-no-limits", maxCalls = 1, maxCostPct = 25 } = {}) {
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  if (!byName[on] || !byName[off]) return null;
  // Three decimals here (not roundRatio's two): the cost is read in percent.
  const per = (key) => rounds.map((r) => {
    const a = r.runs[on]?.[key];
    const b = r.runs[off]?.[key];
    return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b, 3) : null;
  });
  const rpsPerRound = per("rps");
  const p99PerRound = per("p99");
  const p50PerRound = per("p50");
  const rpsRatio = round(median(rpsPerRound), 3);
  const costPct = Number.isFinite(rpsRatio) ? round((1 - rpsRatio) * 100, 1) : null;
  const costPerRoundPct = rpsPerRound.map((x) => (Number.isFinite(x) ? round((1 - x) * 100, 1) : null));
  const calls = byName[on].limiterCalls;
  const side = (row) => ({ ok: row.ok, instance: row.instance, rps: row.rps, p50: row.p50, p99: row.p99, limiterCalls: row.limiterCalls, d1RoundTrips: row.d1RoundTrips });
  return {
    compared: `${on} (RATE_LIMITS_ENABLED=true) ÷ ${off} (RATE_LIMITS_ENABLED=false), same bundle, same run; ratios per round, median kept`,
    on: { name: on, ...side(byName[on]) },
    off: { name: off, ...side(byName[off]) },
    rpsRatio,
    p99Ratio: round(median(p99PerRound), 3),
    p50Ratio: round(median(p50PerRound), 3),
    costPct,
    rpsRatioPerRound: rpsPerRound,
    p99RatioPerRound: p99PerRound,
    costPerRoundPct,
    limiterCallsPerRead: calls,
    aims: {
      maxCallsPerRead: maxCalls,
      maxCostPct,
      callsMet: calls !== null && calls <= maxCalls,
      costMet: costPct !== null && costPct < maxCostPct,
      comparable: byName[on].ok && byName[off].ok,
    },
  };
}

export function formatLimiter(limiter) {
  const { on, off, aims } = limiter;
  const pct = (x) => (x === null ? "-" : `${x.toFixed(1)} %`);
  const out = [
    `Rate limiter on a read: ${on.name} (limits on) ${fmt(on.rps, 0)} req/s, p99 ${fmt(on.p99)} ms; ` +
      `${off.name} (limits off) ${fmt(off.rps, 0)} req/s, p99 ${fmt(off.p99)} ms.`,
    `  on ÷ off per round: req/s ${limiter.rpsRatioPerRound.map((x) => fmt(x)).join(", ")} (median ×${fmt(limiter.rpsRatio)}), ` +
      `p99 ${limiter.p99RatioPerRound.map((x) => fmt(x)).join(", ")} (median ×${fmt(limiter.p99Ratio)}).`,
    `  throughput cost ${pct(limiter.costPct)} (per round ${limiter.costPerRoundPct.map(pct).join(", ")}); aim < ${aims.maxCostPct} %: ${aims.costMet ? "met" : "NOT met"}.`,
    `  counter-store calls per read (Server-Timing limiter): ${limiter.limiterCallsPerRead ?? "?"} with limits on, ${off.limiterCalls ?? "?"} off; ` +
      `aim ≤ ${aims.maxCallsPerRead}: ${aims.callsMet ? "met" : "NOT met"}.`,
  ];
  if (!aims.comparable) out.push("  (one of the two targets FAILED: these figures are not comparable)");
  return out.join("\n");
}

/**
 * What the login scenarios say about Argon2id inside workerd. The harness measures throughput and
 * latency at N closed-loop connections, not the time of one request in isolation. JavaScript in
 * one isolate runs one request at a time, and a login's Argon2id verification is synchronous CPU
 * work (~all of the request), so at saturation 1000 / (req/s) is the mean time the isolate spends
 * per request: the verification plus routing, validation, D1 and token work and logging. It is an
 * upper bound on the hash's own time, not a measurement of it; p50 latency is ~N times larger
 * because N requests queue behind one another.
 */
export function summarizeLogin(rows, rounds, names = ["login", "login-wrong-password", "login-unknown"]) {
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  const present = names.filter((n) => byName[n]);
  if (present.length === 0) return null;
  const msPerResponse = (name) => rounds.map((r) => (r.runs[name]?.rps > 0 ? round(1000 / r.runs[name].rps, 2) : null));
  const scenarios = Object.fromEntries(present.map((name) => {
    const perRound = msPerResponse(name);
    return [name, {
      ok: byName[name].ok,
      expectStatus: byName[name].expectStatus,
      d1RoundTrips: byName[name].d1RoundTrips,
      limiterCalls: byName[name].limiterCalls,
      rps: byName[name].rps,
      p50: byName[name].p50,
      p99: byName[name].p99,
      msPerResponse: round(median(perRound), 2),
      msPerResponsePerRound: perRound,
    }];
  }));
  // Failed-login paths against each other and against the successful one, per round, median kept.
  const pairs = [["login-unknown", "login-wrong-password"], ["login-unknown", "login"], ["login-wrong-password", "login"]]
    .filter(([a, b]) => byName[a] && byName[b]);
  const comparisons = pairs.map(([a, b]) => {
    const per = (key) => rounds.map((r) => ratio(r.runs[a]?.[key], r.runs[b]?.[key]));
    const rpsPerRound = per("rps");
    const p50PerRound = per("p50");
    return {
      pair: `${a} ÷ ${b}`,
      rps: round(median(rpsPerRound), 2),
      p50: round(median(p50PerRound), 2),
      rpsPerRound,
      p50PerRound,
    };
  });
  return {
    measured: "1000 / req/s at saturation with the bench's connections: mean isolate time per request (Argon2id verification + everything else the request does), an upper bound on the hash itself",
    scenarios,
    comparisons,
  };
}

export function formatLogin(login, hashCompare, { connections, budgetMs = 100 } = {}) {
  const out = [];
  if (hashCompare) {
    const wasm = hashCompare.implementations["@phi-ag/argon2"];
    const noble = hashCompare.implementations["@noble/hashes"];
    out.push(`Argon2id in Node: @phi-ag/argon2 median ${fmt(wasm.medianMs, 1)} ms (p90 ${fmt(wasm.p90Ms, 1)}), ` +
      `@noble/hashes median ${fmt(noble.medianMs, 1)} ms (p90 ${fmt(noble.p90Ms, 1)}), ×${fmt(hashCompare.speedup, 1)}; ` +
      `aim ≤ ${budgetMs} ms per hash: ${wasm.p90Ms <= budgetMs ? "met" : "NOT met"} by the wasm build at p90.`);
  }
  if (login) {
    const cells = Object.entries(login.scenarios).map(([name, s]) =>
      `${name}${s.expectStatus === "2xx" ? "" : ` [${s.expectStatus}]`}: ${fmt(s.msPerResponse, 1)} ms per response (${s.d1RoundTrips ?? "?"} D1 rt)`);
    out.push(`In workerd, ${connections} connection${connections === 1 ? "" : "s"}, 1000 / req/s (isolate time per request, hash + the rest; an upper bound on the hash): ${cells.join("; ")}.`);
    for (const c of login.comparisons) out.push(`  ${c.pair}: req/s ×${fmt(c.rps)}, p50 ×${fmt(c.p50)} (per round: ${c.rpsPerRound.map((x) => fmt(x)).join(", ")})`);
  }
  return out.join("\n");
}
