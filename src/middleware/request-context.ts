import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import { createLogger } from "../lib/logger";
import { resolveRequestId } from "../lib/request-id";
import { limiterCalls } from "../services/platform/build-services";
import { type BegunRequest, handoverOf } from "./handover";

// Not hono/request-id: its filter (`[\w\-=]`, up to a length) echoes `=` and a leading `-` or `_`
// and replaces ids with `.` or `:`, against the rule of docs/conventions.md "Request ids"; bent to
// ours (no header name, our check as its generator) it would only call resolveRequestId. It also
// sets the header before the handler runs, where a Response the handler builds itself (the docs
// assets) need not keep it; this one stamps the final response.

/**
 * Outermost middleware: gives the request its id, logger and client IP, and on the way out
 * stamps `X-Request-ID`, reports D1 round trips and counter-store calls in development, and writes
 * the access log line.
 * It does nothing that can throw, so its epilogue runs for every response, errors included.
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  // A request the fast lane began (src/fast-lane.ts) keeps its id, logger and start.
  const handover = handoverOf(c.req.raw);
  const begun = handover ?? beginRequest(c.req.header("x-request-id"), c.req.header("cf-connecting-ip"));
  c.set("requestId", begun.requestId);
  c.set("log", begun.log);
  c.set("clientIp", begun.clientIp);

  await next();

  const services = c.get("services") as Services | undefined;
  const answer: Answered = {
    method: c.req.method,
    path: c.req.path,
    status: c.res.status,
    isDevelopment: services?.config.isDevelopment ?? false,
    roundTrips: services?.roundTrips.count ?? 0,
    limiterCalls: services ? limiterCalls(services) : 0,
    lane: handover ? "handed over" : "app",
  };
  const headers = writableHeaders(c);
  headers.set(REQUEST_ID_HEADER, begun.requestId);
  const timing = serverTiming(answer);
  if (timing !== null) headers.append("Server-Timing", timing);
  logRequest(begun, answer);
});

/** The header that names a request: its id, the client's when well formed (docs/conventions.md "Request ids"). */
export const REQUEST_ID_HEADER = "X-Request-ID";

/** What answered a request: the fast lane (src/fast-lane.ts), the app, or the app after the fast lane began it. */
export type Lane = "fast" | "app" | "handed over";

/** How a request was answered, for its `Server-Timing` and its access log line. */
export interface Answered {
  method: string;
  path: string;
  status: number;
  /** Whether the configuration says development (`Server-Timing` is sent only then); false when it could not be read. */
  isDevelopment: boolean;
  roundTrips: number;
  limiterCalls: number;
  lane: Lane;
}

/** Starts a request: `requestIdHeader` is its `X-Request-ID`, `connectingIp` its `CF-Connecting-IP`. */
export function beginRequest(requestIdHeader: string | undefined | null, connectingIp: string | undefined | null): BegunRequest {
  const requestId = resolveRequestId(requestIdHeader ?? undefined);
  // Cloudflare sets CF-Connecting-IP on every request it forwards; X-Forwarded-For is client-controlled.
  return { requestId, log: createLogger({ request_id: requestId }), clientIp: connectingIp ?? null, started: Date.now() };
}

/** `Server-Timing` in development: the D1 round trips, counter-store calls and lane of the request; null otherwise. */
export function serverTiming(answer: Answered): string | null {
  if (!answer.isDevelopment) return null;
  return `d1;desc="${answer.roundTrips} round trips", limiter;desc="${answer.limiterCalls} calls", lane;desc="${answer.lane}"`;
}

/** The access log line: one per request, naming the lane that answered (also in production, where `Server-Timing` is not sent). */
export function logRequest(begun: BegunRequest, answer: Answered): void {
  begun.log.info("request", {
    method: answer.method,
    path: answer.path,
    status: answer.status,
    duration_ms: Date.now() - begun.started,
    d1_round_trips: answer.roundTrips,
    limiter_calls: answer.limiterCalls,
    lane: answer.lane,
    client_ip: begun.clientIp,
  });
}
