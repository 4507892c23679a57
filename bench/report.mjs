// Medians over rounds, ratios to the baselines, the printed table and the JSON document.
import { median, rotationAddresses, round } from "./load.mjs";

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
    parts.push(
      `${unexpected} responses other than ${expect ?? "2xx"} (${Object.entries(codes)
        .map(([c, n]) => `${c}: ${n}`)
        .join(", ")})`,
    );
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
  const header = [
    "target",
    "req/s",
    "p50 ms",
    "p99 ms",
    "D1 rt/req",
    "limiter calls",
    "req/s ÷ trivial",
    "req/s ÷ select1",
    "p99 ÷ trivial",
    "p99 ÷ select1",
    "",
  ];
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
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join("  ")
      .trimEnd();
  const out = [line(header), line(widths.map((w) => "-".repeat(w))), ...body.map(line)];
  out.push(
    "* baselines: 0 and 1 D1 round trips per request by construction; scenarios: Server-Timing header (d1, and limiter: counter-store calls).",
  );
  out.push("ratios: taken within each round, median over rounds (so they need not equal the quotient of the medians).");
  if (rows.some((r) => r.expectStatus !== "2xx")) {
    out.push("[NNN]: a scenario that measures an error path; every response must have that status (any other is a failure).");
  }
  const clientBound = rows.filter((r) => r.clientCpu >= 0.9).map((r) => `${r.name} (${r.clientCpu})`);
  if (clientBound.length) {
    out.push(
      `note: the load generator used ~a full core on ${clientBound.join(", ")}: there the client limits req/s, so ratios to it understate costs.`,
    );
  }
  for (const r of rows) if (!r.ok) out.push(`FAILED ${r.name}: ${r.failure} — its numbers are not comparable.`);
  return out.join("\n");
}

/**
 * What the rate limiter costs a read, `GET /v1/units` with limits on against `units-no-limits`
 * (the same bundle on a second instance with RATE_LIMITS_ENABLED=false), all in every round, in
 * two cases:
 *  - `steady`: `units`, clients from the --addresses pool (256), each coming back a few times a
 *    second, so a read finds its address's counter object in use (a real client's second and
 *    later requests);
 *  - `newClients`: `units-new-clients`, a never-seen address per request, so every read creates
 *    its counter object: the cold-start worst case (a flood of first requests).
 * Ratios are taken within each round (on ÷ off) and the median kept; the throughput cost is
 * 1 - that ratio. The aims (product issue): at most one counter-store round trip per read, under
 * 25 % throughput cost, judged on steady clients; the new-clients figure is reported beside them,
 * with whether it would meet them. Reported, never a reason to fail the run.
 */
export function summarizeLimiter(
  rows,
  rounds,
  { off = "units-no-limits", steady = "units", newClients = "units-new-clients", maxCalls = 1, maxCostPct = 25 } = {},
) {
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  if (!byName[off] || (!byName[steady] && !byName[newClients])) return null;
  const side = (row) => ({
    name: row.name,
    ok: row.ok,
    instance: row.instance,
    rps: row.rps,
    p50: row.p50,
    p99: row.p99,
    limiterCalls: row.limiterCalls,
    d1RoundTrips: row.d1RoundTrips,
    addresses: row.clientAddresses?.pool ?? null,
  });
  const compare = (on, clients) => {
    if (!byName[on]) return null;
    // Three decimals here (not roundRatio's two): the cost is read in percent.
    const per = (key) =>
      rounds.map((r) => {
        const a = r.runs[on]?.[key];
        const b = r.runs[off]?.[key];
        return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b, 3) : null;
      });
    const rpsRatioPerRound = per("rps");
    const rpsRatio = round(median(rpsRatioPerRound), 3);
    const costPct = Number.isFinite(rpsRatio) ? round((1 - rpsRatio) * 100, 1) : null;
    const calls = byName[on].limiterCalls;
    return {
      clients,
      on: side(byName[on]),
      rpsRatio,
      p99Ratio: round(median(per("p99")), 3),
      p50Ratio: round(median(per("p50")), 3),
      costPct,
      rpsRatioPerRound,
      p99RatioPerRound: per("p99"),
      p50RatioPerRound: per("p50"),
      costPerRoundPct: rpsRatioPerRound.map((x) => (Number.isFinite(x) ? round((1 - x) * 100, 1) : null)),
      limiterCallsPerRead: calls,
      callsMet: calls !== null && calls <= maxCalls,
      costMet: costPct !== null && costPct < maxCostPct,
      comparable: byName[on].ok && byName[off].ok,
    };
  };
  const steadyResult = compare(
    steady,
    "steady clients: the --addresses pool, round robin; a read finds its address's counter object in use",
  );
  const newResult = compare(
    newClients,
    "new clients: a never-seen address per read; each read creates its counter object (cold-start worst case)",
  );
  return {
    compared: `GET /v1/units with limits on ÷ ${off} (RATE_LIMITS_ENABLED=false), same bundle, same run; ratios per round, median kept`,
    off: side(byName[off]),
    steady: steadyResult,
    newClients: newResult,
    // The aims are judged on steady clients (null when `units` did not run); newClients.callsMet /
    // costMet say how the worst case compares to them.
    aims: {
      evaluatedOn: steadyResult ? steady : null,
      maxCallsPerRead: maxCalls,
      maxCostPct,
      callsMet: steadyResult ? steadyResult.callsMet : null,
      costMet: steadyResult ? steadyResult.costMet : null,
      comparable: steadyResult ? steadyResult.comparable : null,
    },
  };
}

export function formatLimiter(limiter) {
  const { off, aims } = limiter;
  const pct = (x) => (x === null ? "-" : `${x.toFixed(1)} %`);
  const pool = (a) => (a ? (a.unique ? `a new address per read, ${a.first} up` : `${a.size} addresses, ${a.first}–${a.last}`) : "?");
  const out = [
    `Rate limiter on a read (GET /v1/units), limits on ÷ ${off.name} (limits off: ${fmt(off.rps, 0)} req/s, p99 ${fmt(off.p99)} ms), ratios per round, median kept:`,
  ];
  const block = (label, c, role) => {
    if (!c) return;
    out.push(`  ${label}: ${c.on.name} (${pool(c.on.addresses)}) ${fmt(c.on.rps, 0)} req/s, p99 ${fmt(c.on.p99)} ms; ${role}`);
    out.push(
      `    req/s on ÷ off ${c.rpsRatioPerRound.map((x) => fmt(x)).join(", ")} (×${fmt(c.rpsRatio)}); ` +
        `p99 on ÷ off ${c.p99RatioPerRound.map((x) => fmt(x)).join(", ")} (×${fmt(c.p99Ratio)})`,
    );
    out.push(
      `    throughput cost ${pct(c.costPct)} (per round ${c.costPerRoundPct.map(pct).join(", ")}): ` +
        `${c.costMet ? "under" : "NOT under"} ${aims.maxCostPct} %; counter-store calls per read ${c.limiterCallsPerRead ?? "?"} (off: ${off.limiterCalls ?? "?"})` +
        `${c.comparable ? "" : "; a target FAILED: not comparable"}`,
    );
  };
  block("steady clients", limiter.steady, "the aims are judged here");
  block("new clients", limiter.newClients, "one new counter object per read: the cold-start worst case, reported, not the aims' measure");
  if (aims.evaluatedOn) {
    out.push(
      `  aims, on steady clients (${aims.evaluatedOn}): ≤ ${aims.maxCallsPerRead} counter-store call per read: ${aims.callsMet ? "met" : "NOT met"}; ` +
        `< ${aims.maxCostPct} % throughput cost: ${aims.costMet ? "met" : "NOT met"}${aims.comparable ? "" : " (not comparable: a target FAILED)"}.`,
    );
  } else {
    out.push(`  aims: not evaluated (the steady-clients scenario \`units\` did not run).`);
  }
  return out.join("\n");
}

/**
 * Client addresses per scenario, and whether the per-address request-rate limits could refuse
 * the load. A steady pool of N addresses at R req/s, sustained, sends R × w / N requests per
 * address per window of w seconds; each IP-keyed policy of the probe's `RateLimit-Policy` (the
 * limits the app reports for the request, e.g. `"read-ip";q=300;w=60`) must allow that with the
 * fastest round's R, or a machine that sustained it would answer 429: the target fails, whether or
 * not a 429 came (the bench runs each scenario 5 s of every ~50 s round, fewer than sustained
 * load). A pool marked unique (new clients) fails when any address came back. Sets
 * `row.clientAddresses` and marks failures on the rows; returns nothing.
 */
export function checkClientAddresses(rows, targets, rounds) {
  const byName = Object.fromEntries(targets.map((t) => [t.name, t]));
  for (const row of rows) {
    const t = byName[row.name];
    if (!t?.request?.rotation) continue;
    const a = rotationAddresses(t.request.rotation);
    const answered = (t.warmupResponses ?? 0) + rounds.reduce((n, r) => n + (r.runs[row.name]?.requests ?? 0), 0) + (t.probe ? 1 : 0);
    const fastest = Math.max(0, ...rounds.map((r) => r.runs[row.name]?.rps ?? 0));
    const policies = parsePolicies(t.probe?.rateLimitPolicy);
    const limits = policies
      .filter((p) => p.name.endsWith("-ip"))
      .map((p) => {
        const perAddress = a.unique ? 1 : (fastest * p.windowSeconds) / a.size;
        return {
          policy: p.name,
          quota: p.quota,
          windowSeconds: p.windowSeconds,
          atRps: fastest,
          perAddressPerWindow: round(perAddress, 1),
          shareOfQuota: round(perAddress / p.quota, 3),
        };
      });
    // A signed-in request counts in a per-user bucket instead (write-user, ...): the scenario's
    // `users` accounts in turn (vary), each sending fastest × w / users per window, sustained.
    const users = t.users ?? 1;
    const userLimits = policies
      .filter((p) => p.name.endsWith("-user"))
      .map((p) => {
        const perUser = (fastest * p.windowSeconds) / users;
        return {
          policy: p.name,
          quota: p.quota,
          windowSeconds: p.windowSeconds,
          atRps: fastest,
          users,
          perUserPerWindow: round(perUser, 1),
          shareOfQuota: round(perUser / p.quota, 3),
        };
      });
    row.clientAddresses = {
      pool: { first: a.first, last: a.last, size: a.size, unique: a.unique },
      requestsBuilt: a.requests,
      responses: answered,
      distinct: a.distinct,
      repeated: a.repeated,
      range: a.range,
      perAddressLimits: limits,
      ...(userLimits.length > 0 && { perUserLimits: userLimits }),
    };
    const problems = [];
    if (a.unique && a.repeated) {
      problems.push(
        `${a.requests} requests over a pool of ${a.size} never-seen addresses: addresses came back, the new-clients figure would be too low`,
      );
    }
    for (const l of limits) {
      if (!a.unique && l.shareOfQuota >= 1) {
        problems.push(
          `at ${fmt(fastest, 0)} req/s (fastest round) each of the ${a.size} addresses would send ${fmt(l.perAddressPerWindow, 0)} requests per ${l.windowSeconds} s, ` +
            `over "${l.policy}" (${l.quota}): sustained, this load would be refused with 429; raise --addresses (or the scenario's pool)`,
        );
      }
    }
    for (const l of userLimits) {
      if (l.shareOfQuota >= 1) {
        problems.push(
          `at ${fmt(fastest, 0)} req/s (fastest round) each of the ${users} accounts would send ${fmt(l.perUserPerWindow, 0)} requests per ${l.windowSeconds} s, ` +
            `over "${l.policy}" (${l.quota}): sustained, this load would be refused with 429; give the scenario more accounts`,
        );
      }
    }
    const n429 = rounds.reduce((n, r) => n + (r.runs[row.name]?.statusCounts?.["429"] ?? 0), 0);
    if (n429)
      problems.push(
        `${n429} responses were 429 (rate limited): the address pool (${a.size}) is too small for this load; raise --addresses`,
      );
    if (problems.length) {
      row.ok = false;
      row.failure = [row.failure, ...problems].filter(Boolean).join("; ");
    }
  }
}

/** `"read-ip";q=300;w=60, ...` (RateLimit-Policy) as [{ name, quota, windowSeconds }]. */
export function parsePolicies(header) {
  if (!header) return [];
  return [...header.matchAll(/"([^"]+)"\s*;\s*q=(\d+)\s*;\s*w=(\d+)/g)].map((m) => ({
    name: m[1],
    quota: Number(m[2]),
    windowSeconds: Number(m[3]),
  }));
}

export function formatClientAddresses(rows) {
  const out = [
    "Client addresses (CF-Connecting-IP), per scenario; the limits are the IP-keyed ones of the probe's RateLimit-Policy (user-keyed for a signed-in scenario, over its `users` accounts):",
  ];
  for (const r of rows) {
    const c = r.clientAddresses;
    if (!c) continue;
    const head = c.pool.unique
      ? `a new address per request (pool ${c.pool.first}–${c.pool.last}, ${c.pool.size.toLocaleString("en")}): ${c.requestsBuilt} requests built, ` +
        `${c.distinct} distinct addresses (${c.range ?? "-"}), ${c.repeated ? "SOME REPEATED" : "none repeated"}`
      : `${c.pool.size} addresses (${c.pool.first}–${c.pool.last}), round robin: ${c.requestsBuilt} requests built, ~${fmt(c.requestsBuilt / c.pool.size, 0)} per address in the run`;
    const limits = c.perAddressLimits.length
      ? c.pool.unique
        ? ""
        : `; sustained at ${fmt(c.perAddressLimits[0].atRps, 0)} req/s (fastest round): ` +
          c.perAddressLimits
            .map(
              (l) =>
                `${fmt(l.perAddressPerWindow, 1)} per address per ${l.windowSeconds} s, ${fmt(l.shareOfQuota * 100, 0)} % of "${l.policy}" (${l.quota})`,
            )
            .join(", ")
      : c.perUserLimits
        ? `; signed in, no per-IP limit: sustained at ${fmt(c.perUserLimits[0].atRps, 0)} req/s (fastest round) over ${c.perUserLimits[0].users} accounts, ` +
          c.perUserLimits
            .map(
              (l) =>
                `${fmt(l.perUserPerWindow, 1)} per account per ${l.windowSeconds} s, ${fmt(l.shareOfQuota * 100, 0)} % of "${l.policy}" (${l.quota})`,
            )
            .join(", ")
        : "; no per-IP limit reported (limits off, or outside /v1)";
    out.push(`  ${r.name}: ${head}${limits}`);
  }
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
  const scenarios = Object.fromEntries(
    present.map((name) => {
      const perRound = msPerResponse(name);
      return [
        name,
        {
          ok: byName[name].ok,
          expectStatus: byName[name].expectStatus,
          d1RoundTrips: byName[name].d1RoundTrips,
          limiterCalls: byName[name].limiterCalls,
          rps: byName[name].rps,
          p50: byName[name].p50,
          p99: byName[name].p99,
          msPerResponse: round(median(perRound), 2),
          msPerResponsePerRound: perRound,
        },
      ];
    }),
  );
  // Failed-login paths against each other and against the successful one, per round, median kept.
  const pairs = [
    ["login-unknown", "login-wrong-password"],
    ["login-unknown", "login"],
    ["login-wrong-password", "login"],
  ].filter(([a, b]) => byName[a] && byName[b]);
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
    measured:
      "1000 / req/s at saturation with the bench's connections: mean isolate time per request (Argon2id verification + everything else the request does), an upper bound on the hash itself",
    scenarios,
    comparisons,
  };
}

export function formatLogin(login, hashCompare, { connections, budgetMs = 100 } = {}) {
  const out = [];
  if (hashCompare) {
    const wasm = hashCompare.implementations["@phi-ag/argon2"];
    const noble = hashCompare.implementations["@noble/hashes"];
    out.push(
      `Argon2id in Node: @phi-ag/argon2 median ${fmt(wasm.medianMs, 1)} ms (p90 ${fmt(wasm.p90Ms, 1)}), ` +
        `@noble/hashes median ${fmt(noble.medianMs, 1)} ms (p90 ${fmt(noble.p90Ms, 1)}), ×${fmt(hashCompare.speedup, 1)}; ` +
        `aim ≤ ${budgetMs} ms per hash: ${wasm.p90Ms <= budgetMs ? "met" : "NOT met"} by the wasm build at p90.`,
    );
  }
  if (login) {
    const cells = Object.entries(login.scenarios).map(
      ([name, s]) =>
        `${name}${s.expectStatus === "2xx" ? "" : ` [${s.expectStatus}]`}: ${fmt(s.msPerResponse, 1)} ms per response (${s.d1RoundTrips ?? "?"} D1 rt)`,
    );
    out.push(
      `In workerd, ${connections} connection${connections === 1 ? "" : "s"}, 1000 / req/s (isolate time per request, hash + the rest; an upper bound on the hash): ${cells.join("; ")}.`,
    );
    for (const c of login.comparisons)
      out.push(`  ${c.pair}: req/s ×${fmt(c.rps)}, p50 ×${fmt(c.p50)} (per round: ${c.rpsPerRound.map((x) => fmt(x)).join(", ")})`);
  }
  return out.join("\n");
}

/**
 * The products scenarios (issue 5) in one small block: req/s, p99, D1 round trips and req/s ÷
 * select1 (per round, median) of each, and the aim for the three reads: at least half the
 * one-query D1 baseline's req/s (the create is reported, not judged). Null when none ran.
 */
export function summarizeProducts(
  rows,
  {
    reads = ["product-detail", "product-detail-signed-in", "product-list", "product-list-search", "product-tree"],
    writes = ["product-create"],
    minRpsVsSelect1 = 0.5,
  } = {},
) {
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  const present = [...reads, ...writes].filter((n) => byName[n]);
  if (present.length === 0) return null;
  const scenarios = Object.fromEntries(
    present.map((name) => {
      const r = byName[name];
      const read = reads.includes(name);
      const ratio = r.ratios.rpsVsSelect1;
      return [
        name,
        {
          ok: r.ok,
          rps: r.rps,
          p99: r.p99,
          d1RoundTrips: r.d1RoundTrips,
          rpsVsSelect1: ratio,
          ...(read && { aimMet: r.ok && ratio !== null && ratio >= minRpsVsSelect1 }),
        },
      ];
    }),
  );
  const judged = reads.filter((n) => scenarios[n]);
  return {
    aim: `each read at least ${minRpsVsSelect1} × ${SELECT1} req/s (ratio per round, median)`,
    select1Rps: byName[SELECT1]?.rps ?? null,
    scenarios,
    readsMet: judged.length > 0 ? judged.every((n) => scenarios[n].aimMet) : null,
  };
}

export function formatProducts(products) {
  const out = [`Products (aim: ${products.aim}; select1 ${fmt(products.select1Rps, 0)} req/s):`];
  for (const [name, s] of Object.entries(products.scenarios)) {
    const aim = s.aimMet === undefined ? "reported, not judged" : s.aimMet ? "aim met" : "aim NOT met";
    out.push(
      `  ${name.padEnd(24)} ${fmt(s.rps, 0).padStart(6)} req/s  p99 ${fmt(s.p99).padStart(8)} ms  ${s.d1RoundTrips ?? "?"} D1 rt  ÷ select1 ${fmtRatio(s.rpsVsSelect1)}  ${aim}${s.ok ? "" : " (FAILED)"}`,
    );
  }
  if (products.readsMet !== null) out.push(`  reads: ${products.readsMet ? "all meet the aim" : "NOT all meet the aim"}.`);
  return out.join("\n");
}

/**
 * The figures of issue 24's Aims table, each with its aim, from one run: the product reads ÷
 * select1 (ratio per round, median), the tree's p99, `/live` ÷ trivial, the D1 round trips of an
 * anonymous and of a signed-in product read (each scenario's probe: the second read of that
 * record, its seed having read it once), and the upload request of the 10 MP orientation-6 JPEG
 * (media section). A figure whose scenario or section did not run is null. bench/README.md's
 * table is this one (`formatAims` prints it as Markdown).
 */
export function summarizeAims(rows, media) {
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  const ok = (name) => byName[name]?.ok === true;
  const ratio = (name, key) => (ok(name) ? byName[name].ratios[key] : null);
  const o6 = media?.orientations?.find((o) => o.orientation === 6) ?? null;
  const figure = (id, label, value, aim, met, unit = "") => ({ id, label, value, aim, met: value === null ? null : met(value), unit });
  return [
    figure("detail", "product detail anonymous, ÷ one-query D1 worker", ratio("product-detail", "rpsVsSelect1"), ">= 0.9", (v) => v >= 0.9),
    figure("list", "product list, ÷ one-query D1 worker", ratio("product-list", "rpsVsSelect1"), ">= 0.8", (v) => v >= 0.8),
    figure("search", "list with `search`, ÷ one-query D1 worker", ratio("product-list-search", "rpsVsSelect1"), ">= 0.6", (v) => v >= 0.6),
    figure("tree", "tree of 1,000 components, ÷ one-query D1 worker", ratio("product-tree", "rpsVsSelect1"), ">= 0.8", (v) => v >= 0.8),
    figure(
      "treeP99",
      "tree of 1,000 components, p99",
      ok("product-tree") ? byName["product-tree"].p99 : null,
      "< 50 ms",
      (v) => v < 50,
      " ms",
    ),
    figure("live", "`/live`, ÷ trivial worker", ratio("live", "rpsVsTrivial"), ">= 0.6", (v) => v >= 0.6),
    figure(
      "anonymousRoundTrips",
      "D1 round trips of a cached anonymous read (product detail)",
      byName["product-detail"]?.d1RoundTrips ?? null,
      "<= 1",
      (v) => v <= 1,
    ),
    figure(
      "signedInRoundTrips",
      "D1 round trips of a signed-in product read",
      byName["product-detail-signed-in"]?.d1RoundTrips ?? null,
      "1",
      (v) => v <= 1,
    ),
    figure("upload", "upload request of a 10 MP orientation-6 JPEG", o6 ? o6.upload.ms / 1000 : null, "<= 0.3 s", (v) => v <= 0.3, " s"),
  ];
}

/** The aims as a Markdown table (paste into bench/README.md). */
export function formatAims(aims) {
  const out = [
    "Issue 24 aims (Markdown; n/a: its scenario or section did not run):",
    "",
    "| figure | measured | aim | met |",
    "|---|---|---|---|",
  ];
  for (const a of aims) {
    const value =
      a.value === null
        ? "n/a"
        : a.unit === ""
          ? Number.isInteger(a.value)
            ? String(a.value)
            : fmtRatio(a.value)
          : `${fmt(a.value)}${a.unit}`;
    out.push(`| ${a.label} | ${value} | ${a.aim} | ${a.met === null ? "-" : a.met ? "yes" : "no"} |`);
  }
  return out.join("\n");
}
