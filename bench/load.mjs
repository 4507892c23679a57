// One bounded load run with autocannon, in-process.
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

/**
 * Runs `connections` keep-alive connections against url+path for `duration` seconds or until
 * `maxRequests` responses, whichever comes first. Every response must have the expected status:
 * `expectStatus` when given (a scenario that measures an error path, e.g. 400), any 2xx otherwise;
 * anything else (and any connection error or timeout) makes the run not `ok`.
 *
 * Two autocannon details shape what is reported here:
 *  - its latency histogram stores whole milliseconds, too coarse for sub-millisecond local
 *    responses, so p50/p99 are computed from the exact per-response times (the same hrtime values
 *    autocannon records) of the responses with the expected status; autocannon's integer figures
 *    are kept in `autocannon` for reference (its histogram holds 2xx only: empty for a scenario
 *    that expects an error status);
 *  - when the request cap ends a run, the result only arrives at the next 1 s sample tick, so its
 *    `duration` includes idle time; req/s is therefore responses / (last response - start).
 */
export async function runLoad(url, request, { duration, connections, maxRequests, expectStatus = null }) {
  const isExpected = expectStatus === null ? (code) => code >= 200 && code < 300 : (code) => code === expectStatus;
  const latencies = new Float64Array(maxRequests + connections * 2);
  let nExpected = 0;
  let n2xx = 0;
  let responses = 0;
  let lastResponseAt = 0;
  const startedAt = performance.now();
  const cpuBefore = process.cpuUsage();
  const instance = autocannon({
    url: url + request.path,
    method: request.method,
    headers: request.headers,
    body: request.body,
    connections,
    pipelining: 1,
    duration,
    maxOverallRequests: maxRequests,
    timeout: 10,
  });
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    responses++;
    lastResponseAt = performance.now();
    if (statusCode >= 200 && statusCode < 300) n2xx++;
    if (isExpected(statusCode)) {
      if (nExpected < latencies.length) latencies[nExpected] = responseTime;
      nExpected++;
    }
  });
  const result = await instance;
  const cpu = process.cpuUsage(cpuBefore);

  const sorted = latencies.subarray(0, Math.min(nExpected, latencies.length)).sort();
  const elapsedS = (lastResponseAt - startedAt) / 1000;
  const statusCounts = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
  );
  return {
    ok: nExpected === responses && result.errors === 0 && result.timeouts === 0 && nExpected > 0,
    requests: responses,
    expectStatus: expectStatus ?? "2xx",
    expected: nExpected,
    unexpected: responses - nExpected,
    ok2xx: n2xx,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    resets: result.resets,
    statusCounts,
    elapsedS: round(elapsedS, 3),
    rps: elapsedS > 0 ? round(responses / elapsedS, 1) : 0,
    p50: round(percentile(sorted, 50), 3),
    p99: round(percentile(sorted, 99), 3),
    mean: round(sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : NaN, 3),
    max: round(sorted.length ? sorted[sorted.length - 1] : NaN, 3),
    // Share of one core the load generator (this Node process) used: near 1 means the client, not
    // the worker, limited the rate, which happens first on the trivial baseline.
    clientCpu: round((cpu.user + cpu.system) / 1000 / (performance.now() - startedAt), 2),
    autocannon: {
      duration: result.duration,
      requestsAverage: result.requests.average,
      requestsTotal: result.requests.total,
      latencyP50: result.latency.p50,
      latencyP99: result.latency.p99,
    },
  };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export function round(x, digits) {
  if (!Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
