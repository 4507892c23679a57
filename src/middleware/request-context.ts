import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import { createLogger } from "../lib/logger";
import { resolveRequestId } from "../lib/request-id";
import { limiterCalls } from "../services/build-services";
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

  finishRequest(writableHeaders(c), begun, {
    method: c.req.method,
    path: c.req.path,
    status: c.res.status,
    services: c.get("services") as Services | undefined,
    lane: handover ? "handed over" : "app",
  });
});

/** What answered a request: the fast lane (src/fast-lane.ts), the app, or the app after the fast lane began it. */
export type Lane = "fast" | "app" | "handed over";

/** Starts a request: `requestIdHeader` is its `X-Request-ID`, `connectingIp` its `CF-Connecting-IP`. */
export function beginRequest(requestIdHeader: string | undefined | null, connectingIp: string | undefined | null): BegunRequest {
  const requestId = resolveRequestId(requestIdHeader ?? undefined);
  // Cloudflare sets CF-Connecting-IP on every request it forwards; X-Forwarded-For is client-controlled.
  return { requestId, log: createLogger({ request_id: requestId }), clientIp: connectingIp ?? null, started: Date.now() };
}

/**
 * Ends a request: stamps `X-Request-ID` on `headers`, reports D1 round trips, counter-store
 * calls and the lane that answered in development (`Server-Timing`), and writes the access log line.
 */
export function finishRequest(
  headers: Headers,
  begun: BegunRequest,
  answer: { method: string; path: string; status: number; services: Services | undefined; lane: Lane },
): void {
  headers.set("X-Request-ID", begun.requestId);
  const { services } = answer;
  const roundTrips = services?.roundTrips.count ?? 0;
  const limiterCallCount = services ? limiterCalls(services) : 0;
  if (services?.config.isDevelopment) {
    headers.append(
      "Server-Timing",
      `d1;desc="${roundTrips} round trips", limiter;desc="${limiterCallCount} calls", lane;desc="${answer.lane}"`,
    );
  }
  begun.log.info("request", {
    method: answer.method,
    path: answer.path,
    status: answer.status,
    duration_ms: Date.now() - begun.started,
    d1_round_trips: roundTrips,
    limiter_calls: limiterCallCount,
    client_ip: begun.clientIp,
  });
}
