import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import { bookmarkOf, type SessionStart } from "../db/client";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import type { Plugin } from "../plugin";
import { type BuildOptions, buildServices } from "../services/platform/build-services";
import { presentedAccessToken } from "./authenticate";
import { handoverOf } from "./handover";

/** `X-D1-Bookmark`: the D1 session bookmark a response reports and a request may send back (docs/storage.md "Read replicas"). */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

// D1 bookmarks are dash-separated hex groups; anything else a client sends is ignored (its read
// then starts wherever an anonymous read would), never handed to D1.
const BOOKMARK = /^[0-9a-f]{1,16}(?:-[0-9a-f]{1,64}){1,7}$/i;

/**
 * Where the request's D1 session starts. Writes start on the primary, which is never behind any
 * bookmark. So do signed-in requests: their token's revocation check must see the latest epoch,
 * and a replica could be behind a sign-out. An anonymous read starts at the bookmark the client
 * sent back (a state at least that recent: it reads its own writes) or on any replica.
 */
export function sessionStart(method: string, signedIn: boolean, bookmark: string | undefined): SessionStart {
  if ((method !== "GET" && method !== "HEAD") || signedIn) return "first-primary";
  return bookmark !== undefined && BOOKMARK.test(bookmark) ? bookmark : "first-unconstrained";
}

/**
 * Builds the request's service container (src/container.ts) once, before anything that needs it;
 * `plugins` are the Worker's installed plugins. On the way out it reports the D1 session's
 * bookmark (`X-D1-Bookmark`), or the client's own when the request read nothing.
 */
export function requestServices(plugins: readonly Plugin[]) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const services =
      handoverOf(c.req.raw)?.services ??
      servicesForRequest(c.env, c.req.raw.headers, c.req.method, {
        log: c.get("log"),
        defer: (work) => c.executionCtx.waitUntil(work),
        plugins,
      });
    c.set("services", services);
    c.set("authFlow", false);
    await next();
    const bookmark = responseBookmark(services, c.req.header(BOOKMARK_HEADER));
    if (bookmark !== null) writableHeaders(c).set(BOOKMARK_HEADER, bookmark);
  });
}

/** The service container of a request with `headers` and `method` (its D1 session starts as `sessionStart` says). */
export function servicesForRequest(
  env: Env,
  headers: Headers,
  method: string,
  options: Required<Pick<BuildOptions, "log" | "defer" | "plugins">>,
): Services {
  // Decided when the request first reaches for D1: one that makes no query (`/live`) neither
  // reads its credentials nor makes a database client (bench/README.md, Issue 24).
  const dbSession = () =>
    sessionStart(
      method,
      presentedAccessToken(headers.get("authorization") ?? undefined, headers.get("cookie") ?? undefined) !== null,
      headers.get(BOOKMARK_HEADER)?.trim(),
    );
  return buildServices(env, { ...options, dbSession });
}

/** The bookmark a response reports: its D1 session's, or the one the client sent (`sent`) when the request read nothing. */
export function responseBookmark(services: Services | undefined, sent: string | undefined): string | null {
  // Every query through the client counts a round trip: without one, its session has seen nothing.
  const read = services && services.roundTrips.count > 0 ? bookmarkOf(services.db) : null;
  const trimmed = sent?.trim();
  return read ?? (trimmed !== undefined && BOOKMARK.test(trimmed) ? trimmed : null);
}
