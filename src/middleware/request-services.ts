import { createMiddleware } from "hono/factory";
import { bookmarkOf, type SessionStart } from "../db/client";
import type { AppEnv } from "../env";
import { writableHeaders } from "../lib/http";
import type { Plugin } from "../plugin";
import { buildServices } from "../services/build-services";
import { presentedAccessToken } from "./authenticate";

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
    const sent = c.req.header(BOOKMARK_HEADER)?.trim();
    // Decided when the request first reaches for D1: one that makes no query (`/live`) neither
    // reads its credentials nor makes a database client (bench/README.md, Issue 24).
    const dbSession = () =>
      sessionStart(c.req.method, presentedAccessToken(c.req.header("authorization"), c.req.header("cookie")) !== null, sent);
    const services = buildServices(c.env, { log: c.get("log"), defer: (work) => c.executionCtx.waitUntil(work), plugins, dbSession });
    c.set("services", services);
    c.set("authFlow", false);
    await next();
    // Every query through the client counts a round trip: without one, its session has seen nothing.
    const read = services.roundTrips.count > 0 ? bookmarkOf(services.db) : null;
    const bookmark = read ?? (sent !== undefined && BOOKMARK.test(sent) ? sent : null);
    if (bookmark !== null) writableHeaders(c).set(BOOKMARK_HEADER, bookmark);
  });
}
