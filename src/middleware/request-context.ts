import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import { createLogger } from "../lib/logger";
import { resolveRequestId } from "../lib/request-id";

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
  const started = Date.now();
  const requestId = resolveRequestId(c.req.header("x-request-id"));
  const log = createLogger({ request_id: requestId });
  c.set("requestId", requestId);
  c.set("log", log);
  // Cloudflare sets CF-Connecting-IP on every request it forwards; X-Forwarded-For is client-controlled.
  c.set("clientIp", c.req.header("cf-connecting-ip") ?? null);

  await next();

  const headers = writableHeaders(c);
  headers.set("X-Request-ID", requestId);
  const services = c.get("services") as Services | undefined;
  const roundTrips = services?.roundTrips.count ?? 0;
  const limiterCalls = services?.limiter.calls ?? 0;
  if (services?.config.isDevelopment) {
    headers.append("Server-Timing", `d1;desc="${roundTrips} round trips"`);
    headers.append("Server-Timing", `limiter;desc="${limiterCalls} calls"`);
  }
  log.info("request", {
    method: c.req.method,
    path: c.req.path,
    status: c.res.status,
    duration_ms: Date.now() - started,
    d1_round_trips: roundTrips,
    limiter_calls: limiterCalls,
    client_ip: c.get("clientIp"),
  });
});
