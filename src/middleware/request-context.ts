import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import { newRoundTripCounter, type RoundTripCounter } from "../db/client";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import { createLogger, type Logger } from "../lib/logger";
import { resolveRequestId } from "../lib/request-id";
import { limiterCalls } from "../services/platform/build-services";

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
  const begun = beginRequest(c.req.header("x-request-id"), c.req.header("cf-connecting-ip"));
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
    d1: services ? { ...services.roundTrips } : NO_D1,
    limiterCalls: services ? limiterCalls(services) : 0,
  };
  const headers = writableHeaders(c);
  headers.set(REQUEST_ID_HEADER, begun.requestId);
  const timing = serverTiming(answer);
  if (timing !== null) headers.append("Server-Timing", timing);
  logRequest(begun, answer);
});

/** The header that names a request: its id, the client's when well formed (docs/conventions.md "Request ids"). */
const REQUEST_ID_HEADER = "X-Request-ID";

/** How a request was answered, for its `Server-Timing` and its access log line. */
export interface Answered {
  method: string;
  path: string;
  status: number;
  /** Whether the configuration says development (`Server-Timing` is sent only then); false when it could not be read. */
  isDevelopment: boolean;
  /** What the request cost D1: round trips, rows read and written, database time (src/db/client.ts). */
  d1: RoundTripCounter;
  limiterCalls: number;
}

/** What every request starts with: its id, its logger, its client address and when it began. */
interface BegunRequest {
  requestId: string;
  log: Logger;
  clientIp: string | null;
  started: number;
}

/** Starts a request: `requestIdHeader` is its `X-Request-ID`, `connectingIp` its `CF-Connecting-IP`. */
function beginRequest(requestIdHeader: string | undefined | null, connectingIp: string | undefined | null): BegunRequest {
  const requestId = resolveRequestId(requestIdHeader ?? undefined);
  // Cloudflare sets CF-Connecting-IP on every request it forwards; X-Forwarded-For is client-controlled.
  return { requestId, log: createLogger({ request_id: requestId }), clientIp: connectingIp ?? null, started: Date.now() };
}

/** A request that made no D1 query. */
const NO_D1: RoundTripCounter = newRoundTripCounter();

/** Milliseconds of database time to a hundredth, as `Server-Timing` and the log line carry them. */
const ms = (value: number) => Math.round(value * 100) / 100;

/**
 * `Server-Timing` in development (decisions.md "Request cost"): the D1 round trips, rows read and
 * written and database time (and the longest single statement's), and counter-store calls of
 * the request; null otherwise.
 * Production sends none (what a request read can tell about data it may not see); the access log
 * line carries the same numbers there.
 */
function serverTiming(answer: Answered): string | null {
  if (!answer.isDevelopment) return null;
  const { d1 } = answer;
  const unmetered = d1.unmetered > 0 ? `, ${d1.unmetered} unmetered` : "";
  return (
    `d1;desc="${d1.count} round trips", d1-rows;desc="read ${d1.rowsRead}, written ${d1.rowsWritten}${unmetered}", ` +
    `d1-time;dur=${ms(d1.durationMs)}, d1-longest;dur=${ms(d1.longestMs)}, limiter;desc="${answer.limiterCalls} calls"`
  );
}

/** The access log line: one per request (also in production, where `Server-Timing` is not sent). */
function logRequest(begun: BegunRequest, answer: Answered): void {
  begun.log.info("request", {
    method: answer.method,
    path: answer.path,
    status: answer.status,
    duration_ms: Date.now() - begun.started,
    d1_round_trips: answer.d1.count,
    d1_statements: answer.d1.statements,
    d1_rows_read: answer.d1.rowsRead,
    d1_rows_written: answer.d1.rowsWritten,
    d1_duration_ms: ms(answer.d1.durationMs),
    d1_longest_ms: ms(answer.d1.longestMs),
    ...(answer.d1.unmetered > 0 ? { d1_unmetered: answer.d1.unmetered } : {}),
    limiter_calls: answer.limiterCalls,
    client_ip: begun.clientIp,
  });
}
