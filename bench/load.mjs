// One bounded load run with autocannon, in-process.
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

/**
 * Client addresses. `clientAddress(i, size, first)` is address number `first + (i mod size)` of
 * 10.0.0.0/8 (2^24 = 16,777,216 addresses, number k = 10.(k >> 16).(k >> 8 & 255).(k & 255)).
 * Two kinds of pool:
 *  - steady clients (`--addresses`, default 256): 10.0.0.0 up, at most 10.0.0.0/16, round robin,
 *    so each address comes back a few times a second, as a client already known to the limiter;
 *  - new clients (NEW_CLIENT_POOL, `units-new-clients`): 10.1.0.0–10.255.255.255, 16.7 M
 *    addresses, outside every steady pool, so within a run no request's address was seen before.
 */
export const ADDRESS_POOL = 256;
/** The largest steady pool, `--addresses` (10.0.0.0/16). */
export const MAX_STEADY_ADDRESSES = 65_536;
/** 10.0.0.0/8. */
export const ALL_ADDRESSES = 2 ** 24;
/** A never-seen address per request: all of 10.0.0.0/8 above the steady pools (unique: a repeat fails the target). */
export const NEW_CLIENT_POOL = { first: MAX_STEADY_ADDRESSES, size: ALL_ADDRESSES - MAX_STEADY_ADDRESSES, unique: true };

/** The i-th client address of a pool of `size` addresses starting at address number `first`, round robin. */
export function clientAddress(i, size = ADDRESS_POOL, first = 0) {
  const k = first + (i % size);
  if (!(k >= 0 && k < ALL_ADDRESSES)) throw new Error(`client address number ${k} is outside 10.0.0.0/8`);
  return `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
}

/** `{ first, size, unique }` from a number (a steady pool from 10.0.0.0) or a pool object. */
export function addressPool(pool) {
  const p = typeof pool === "number" ? { first: 0, size: pool } : { first: 0, ...pool };
  if (!Number.isInteger(p.first) || !Number.isInteger(p.size) || p.size < 1 || p.first < 0 || p.first + p.size > ALL_ADDRESSES) {
    throw new Error(`address pool ${JSON.stringify(pool)} does not fit in 10.0.0.0/8`);
  }
  return { first: p.first, size: p.size, unique: p.unique === true };
}

/**
 * Per-request variation of one target, kept across its runs (warm-up and every round): the same
 * object is used by every runLoad of the target, so `next` goes on where the previous run stopped
 * instead of starting again at the same clients. Request i gets `CF-Connecting-IP:
 * clientAddress(i, pool.size, pool.first)` and, when the scenario has one, what `vary(i)` returns
 * (`{ headers?, body? }`; an object body is sent as JSON). `next` ends as the number of requests
 * built (probe included).
 */
export function createRotation(vary = null, pool = ADDRESS_POOL) {
  return { next: 0, vary, pool: addressPool(pool) };
}

/** How many distinct addresses a rotation has used so far, and whether any came back. */
export function rotationAddresses(rotation) {
  const { first, size, unique } = rotation.pool;
  const used = Math.min(rotation.next, size);
  return {
    first: clientAddress(0, size, first),
    last: clientAddress(size - 1, size, first),
    size,
    unique,
    requests: rotation.next,
    distinct: used,
    repeated: rotation.next > size,
    range: rotation.next > 0 ? `${clientAddress(0, size, first)}–${clientAddress(used - 1, size, first)}` : null,
  };
}

/** The i-th request of a rotation: autocannon's raw request object (method, path, headers, body), modified in place. */
export function applyRotation(rotation, req) {
  const i = rotation.next++;
  req.headers["cf-connecting-ip"] = clientAddress(i, rotation.pool.size, rotation.pool.first);
  if (rotation.vary) {
    const v = rotation.vary(i) ?? {};
    if (v.headers) Object.assign(req.headers, v.headers);
    if (v.body !== undefined) {
      if (typeof v.body === "string" || v.body instanceof Uint8Array) {
        req.body = v.body;
      } else {
        req.body = JSON.stringify(v.body);
        req.headers["content-type"] ??= "application/json";
      }
    }
  }
  return req;
}

/**
 * Runs `connections` keep-alive connections against url+path for `duration` seconds or until
 * `maxRequests` responses, whichever comes first. Every response must have the expected status:
 * `expectStatus` when given (a scenario that measures an error path, e.g. 400), any 2xx otherwise;
 * anything else (and any connection error or timeout) makes the run not `ok`.
 *
 * `request.rotation` (createRotation) varies each request: client address, and the scenario's
 * own `vary(i)`. It is used for every request to the app, so that all app targets pay the same
 * client-side cost of building each request anew; the baselines send one fixed request.
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
    // With a rotation, every request is built anew (autocannon's `setupRequest`, called once per
    // request on the connection that sends it); without one (the baselines), one fixed request.
    ...(request.rotation
      ? {
          requests: [
            {
              method: request.method,
              path: request.path,
              headers: request.headers,
              body: request.body,
              setupRequest: (req) => applyRotation(request.rotation, req),
            },
          ],
        }
      : {}),
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
  const statusCounts = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
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
