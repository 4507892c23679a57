import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { readAccessToken } from "../auth/tokens";
import { carryInNextBatch, flushCarried } from "../db/client";
import type { AppEnv } from "../env";
import { matchesIfNoneMatch } from "../lib/etag";
import { writableHeaders } from "../lib/http";
import { expectedClass, generationFrom, type ReadScope, type ViewerClass, validatorStatement, viewerClass } from "../services/read-cache";
import { accessCheckStatement, userFromAccessCheck } from "../services/sessions";
import { presentedAccessToken } from "./authenticate";

/** The Workers cache the public reads keep their answers in (per data centre; docs/storage.md "Cached reads"). */
const CACHE_NAME = "relab-reads";
const GENERATION_HEADER = "X-Read-Generation";
// Entries are validated on every use, so this only bounds how long an unused one takes space.
const STORED_SECONDS = 86_400;

/** The cache key of a read for a viewer class: the request's origin, path and canonically ordered query. */
function cacheKey(url: URL, viewer: ViewerClass): string {
  const params = [...url.searchParams.entries()].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  const query = new URLSearchParams(params).toString();
  return `${url.protocol}//${url.host}/__reads/${url.protocol.slice(0, -1)}/${encodeURIComponent(viewer)}${url.pathname}?${query}`;
}

async function openCache(c: Context<AppEnv>): Promise<Cache | null> {
  try {
    return await caches.open(CACHE_NAME);
  } catch (error) {
    c.get("log").warn("read cache unavailable", { error });
    return null;
  }
}

// Requests whose carried token check has not answered yet (`viewerBeforeRead` runs it early).
const viewerPending = new WeakSet<Context<AppEnv>>();

/** The answer of a cached entry: its body and tag, or 304 when the client holds that tag. */
function fromEntry(c: Context<AppEnv>, entry: Response): Response {
  const etag = entry.headers.get("etag");
  const headers: Record<string, string> = { "Cache-Control": "no-store", "X-Cache": "hit" };
  if (etag) headers.ETag = etag;
  if (etag && matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return c.newResponse(null, 304, headers);
  return c.newResponse(entry.body, 200, { ...headers, "Content-Type": entry.headers.get("content-type") ?? "application/json" });
}

/**
 * Authentication and validated caching for a public read (docs/storage.md "Cached reads"), in
 * place of `authenticate("optional")`. A presented access token is checked as there (a bad or
 * revoked one leaves the request anonymous), but its revocation check travels in the same batch
 * as the read's validator, and on a miss in the handler's own first batch, so a signed-in read
 * costs one round trip like an anonymous one (`carryInNextBatch`). Its `c.get("user")` is known
 * once the handler's first batch has run: a handler that needs the viewer before reading calls
 * `viewerBeforeRead` (one round trip more).
 *
 * The answer of a 200 is kept per viewer class (`ViewerClass`) with the generation its batch
 * read, and served only while the validator reads the same generation in this request's D1
 * session: never older than the database the request reads. Every write that changes what such
 * a read shows renews the generation in its own transaction (migration 0020's triggers).
 */
export function cachedRead(scope: ReadScope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("user", null);
    c.set("session", null);
    const svc = c.get("services");
    const presented = scope === "shared" ? null : presentedAccessToken(c.req.header("authorization"), c.req.header("cookie"));
    const claims = presented?.token ? await readAccessToken(svc.config.tokenSecret, presented.token, svc.clock.now() / 1000) : null;
    const url = new URL(c.req.url);
    const idParam = scope === "record" ? c.req.param("id") : undefined;
    const recordId = idParam !== undefined && /^[1-9]\d{0,15}$/.test(idParam) ? Number(idParam) : null;
    const cacheable = c.req.method === "GET" && (scope !== "record" || recordId !== null);

    let generation: string | null = null;
    const validator = validatorStatement(scope, recordId);
    const carried = cacheable ? [validator] : [];
    if (claims) carried.unshift(accessCheckStatement(claims));
    if (carried.length > 0) {
      // The token check fails closed as in `authenticate`: should its batch fail, the request is a
      // 503, never an anonymous pass. The flag drops once the check has answered.
      const wasAuthFlow = c.get("authFlow");
      if (claims) {
        c.set("authFlow", true);
        viewerPending.add(c);
      }
      carryInNextBatch(svc.db, carried, (rows) => {
        if (claims) {
          c.set("authFlow", wasAuthFlow);
          viewerPending.delete(c);
          const user = userFromAccessCheck(rows[0] ?? [], claims);
          if (user) {
            c.set("user", user);
            c.set("session", { transport: presented!.transport, sessionId: claims.sessionId });
          }
        }
        if (cacheable) generation = generationFrom(rows[rows.length - 1] ?? []);
      });
    }
    if (!cacheable) return next();

    const cache = await openCache(c);
    const expected = expectedClass(scope, claims?.userId ?? null);
    const entry = cache ? await cache.match(cacheKey(url, expected)).catch(() => undefined) : undefined;
    if (entry) {
      // A copy is cached for this viewer: the token check and the validator, and nothing else, first.
      await flushCarried(svc.db);
      const current =
        generation !== null && viewerClass(scope, c.get("user")) === expected && entry.headers.get(GENERATION_HEADER) === generation;
      if (current) return fromEntry(c, entry);
      // Stale: the handler's batch reads the generation again, with the answer it stores.
      generation = null;
      carryInNextBatch(svc.db, [validator], (rows) => {
        generation = generationFrom(rows[0] ?? []);
      });
    }

    await next();
    const stamped = generation as string | null;
    if (!cache || stamped === null || c.res.status !== 200 || !c.res.headers.get("content-type")?.startsWith("application/json")) return;
    writableHeaders(c).set("X-Cache", "miss");
    const key = cacheKey(url, viewerClass(scope, c.get("user")));
    const headers = new Headers({
      "Content-Type": c.res.headers.get("content-type")!,
      "Cache-Control": `max-age=${STORED_SECONDS}`,
      [GENERATION_HEADER]: stamped,
    });
    const etag = c.res.headers.get("etag");
    if (etag) headers.set("ETag", etag);
    // Stored after the answer is sent: the copy's bytes are read from a clone meanwhile.
    const copy = c.res.clone();
    const store = async () => cache.put(key, new Response(await copy.arrayBuffer(), { headers }));
    c.executionCtx.waitUntil(store().catch((error: unknown) => c.get("log").warn("read cache write failed", { error })));
  });
}

/**
 * The viewer of a `cachedRead` route before its handler reads anything: runs the carried token
 * check (and validator) now, in a round trip of their own, unless it has answered already. For
 * reads whose statements depend on who asks (`owner=me`).
 */
export async function viewerBeforeRead(c: Context<AppEnv>) {
  if (viewerPending.has(c)) await flushCarried(c.get("services").db);
  return c.get("user");
}
