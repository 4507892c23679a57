import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { LRUCache } from "lru-cache";
import { carryInNextBatch, flushCarried } from "../db/client";
import type { AppEnv } from "../env";
import { matchesIfNoneMatch } from "../lib/etag";
import { writableHeaders } from "../lib/http";
import {
  expectedClass,
  generationFrom,
  type ReadScope,
  type ViewerClass,
  validatorStatement,
  viewerClass,
  viewerPowers,
} from "../services/caching/read-copies";
import { carryTokenCheck, presentedClaims } from "./authenticate";
import { handoverOf } from "./handover";

/** The Workers cache the public reads keep their answers in (per data centre; docs/storage.md "Cached reads"). */
export const CACHE_NAME = "relab-reads";
const GENERATION_HEADER = "X-Read-Generation";
const POWERS_HEADER = "X-Read-Powers";
// Entries are validated on every use, so this only bounds how long an unused one takes space.
const STORED_SECONDS = 86_400;

/** A cached answer: what `copyAnswer` needs to serve it, and the generation it was read at. */
interface Copy {
  generation: string;
  /** The powers of the viewer it was computed for (`viewerPowers`). */
  powers: "" | "admin";
  etag: string | null;
  contentType: string;
  body: ArrayBuffer;
}

/** A copy in this isolate's memory also knows what validates it (the fast lane, src/fast-lane.ts, has no route to ask). */
export interface RecentCopy extends Copy {
  scope: ReadScope;
  recordId: number | null;
}

const MiB = 1024 * 1024;

// The answers this isolate served or stored lately, in its own memory, in front of the Workers
// cache: a hot read then skips the cache lookup too (its I/O and the copy of its body out of the
// cache). The same keys and the same validation as the Workers cache, so it is exactly as current;
// bounded in bytes, well inside the isolate's 128 MB (docs/storage.md "Cached reads").
const recent = new LRUCache<string, RecentCopy>({
  maxSize: 16 * MiB,
  maxEntrySize: 2 * MiB,
  sizeCalculation: (copy, key) => copy.body.byteLength + key.length * 2 + 256,
});

/** Forgets every copy this isolate keeps in memory (the Workers cache is untouched). */
export function forgetRecentReads(): void {
  recent.clear();
}

/**
 * The cache key of a read for a viewer class: the request's origin, path and query, its pairs
 * ordered by name. The pairs stay as sent (not decoded and encoded again, which maps distinct
 * invalid escapes to one U+FFFD), and pairs of one name keep their order (which a list of values
 * may depend on): two keys are equal only for queries the routes read alike.
 */
export function cacheKey(url: URL, viewer: ViewerClass): string {
  return keyFor(keyParts(url), viewer);
}

/** What the cache keys of one URL share: all but the viewer class, which goes between `head` and `tail`. */
export interface KeyParts {
  head: string;
  tail: string;
}

/** The parts of `url`'s cache keys (`cacheKey`), for a caller that needs the keys of several viewer classes. */
export function keyParts(url: URL): KeyParts {
  const pairs = url.search.length > 1 ? url.search.slice(1).split("&") : [];
  const named = pairs.map((pair) => ({ name: pair.slice(0, pair.includes("=") ? pair.indexOf("=") : pair.length), pair }));
  // Array.prototype.sort is stable: pairs of one name stay in the order they came.
  named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const query = named.map(({ pair }) => pair).join("&");
  return { head: `${url.protocol}//${url.host}/__reads/${url.protocol.slice(0, -1)}/`, tail: `${url.pathname}?${query}` };
}

/** The cache key of a viewer class from its URL's `parts`. */
export function keyFor(parts: KeyParts, viewer: ViewerClass): string {
  return parts.head + encodeURIComponent(viewer) + parts.tail;
}

async function openCache(c: Context<AppEnv>): Promise<Cache | null> {
  try {
    return await caches.open(CACHE_NAME);
  } catch (error) {
    c.get("log").warn("read cache unavailable", { error });
    return null;
  }
}

/** The copy of `key` this isolate keeps in memory, if any. */
export function recentCopy(key: string): RecentCopy | undefined {
  return recent.get(key);
}

/** Forgets the copy of `key` in this isolate's memory (found out of date). */
export function forgetRecentCopy(key: string): void {
  recent.delete(key);
}

/** The answer of a cached copy: its body and tag, or 304 when the client holds that tag (`ifNoneMatch`). */
export function copyAnswer(
  copy: Copy,
  ifNoneMatch: string | null | undefined,
): { status: 200 | 304; body: ArrayBuffer | null; headers: Record<string, string> } {
  const headers: Record<string, string> = { "Cache-Control": "no-store", "X-Cache": "hit" };
  if (copy.etag) headers.ETag = copy.etag;
  if (copy.etag && matchesIfNoneMatch(ifNoneMatch ?? undefined, copy.etag)) return { status: 304, body: null, headers };
  headers["Content-Type"] = copy.contentType;
  return { status: 200, body: copy.body, headers };
}

function fromCopy(c: Context<AppEnv>, copy: Copy): Response {
  const answer = copyAnswer(copy, c.req.header("if-none-match"));
  return c.newResponse(answer.body, answer.status, answer.headers);
}

/** The copy of `key` in this isolate's memory, else in the Workers cache (then remembered in memory too). */
async function lookUp(cache: Cache | null, key: string, scope: ReadScope, recordId: number | null): Promise<Copy | undefined> {
  const kept = recent.get(key);
  if (kept) return kept;
  const entry = cache ? await cache.match(key).catch(() => undefined) : undefined;
  const generation = entry?.headers.get(GENERATION_HEADER);
  if (!entry || !generation) return undefined;
  const copy: Copy = {
    generation,
    powers: entry.headers.get(POWERS_HEADER) === "admin" ? "admin" : "",
    etag: entry.headers.get("etag"),
    contentType: entry.headers.get("content-type") ?? "application/json",
    body: await entry.arrayBuffer(),
  };
  recent.set(key, { ...copy, scope, recordId });
  return copy;
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
    // The fast lane began this request (src/fast-lane.ts): a token it checked is not checked again.
    const handover = handoverOf(c.req.raw);
    if (handover?.checked) {
      c.set("user", handover.checked.user);
      c.set("session", handover.checked.session);
    }
    const check = scope === "shared" || handover?.checked ? null : await presentedClaims(c);
    const url = new URL(c.req.url);
    const idParam = scope === "record" ? c.req.param("id") : undefined;
    const recordId = idParam !== undefined && /^[1-9]\d{0,15}$/.test(idParam) ? Number(idParam) : null;
    const cacheable = c.req.method === "GET" && (scope !== "record" || recordId !== null);

    let generation: string | null = null;
    const validator = validatorStatement(scope, recordId);
    carryTokenCheck(c, check, cacheable ? [validator] : [], (rows) => {
      if (cacheable) generation = generationFrom(rows[0] ?? []);
    });
    if (!cacheable) return next();

    // The account the lane checked, if it did: the token may have expired since, which would make it anonymous here.
    const expected = expectedClass(scope, handover?.checked ? handover.checked.userId : (check?.claims.userId ?? null));
    const expectedKey = cacheKey(url, expected);
    // The fast lane found the copy in memory out of date: read afresh.
    const stale = handover?.staleKey === expectedKey;
    // The Workers cache is opened only when this isolate's memory has no copy.
    const cache: Cache | null | undefined = stale || recent.has(expectedKey) ? undefined : await openCache(c);
    const copy = stale ? undefined : await lookUp(cache ?? null, expectedKey, scope, recordId);
    if (copy) {
      // A copy is cached for this viewer: the token check and the validator, and nothing else, first.
      await flushCarried(svc.db);
      const viewer = c.get("user");
      const current =
        generation !== null &&
        viewerClass(scope, viewer) === expected &&
        viewerPowers(scope, viewer) === copy.powers &&
        copy.generation === generation;
      if (current) return fromCopy(c, copy);
      recent.delete(expectedKey);
      // Stale: the handler's batch reads the generation again, with the answer it stores.
      generation = null;
      carryInNextBatch(svc.db, [validator], (rows) => {
        generation = generationFrom(rows[0] ?? []);
      });
    }

    await next();
    const stamped = generation as string | null;
    if (stamped === null || c.res.status !== 200 || !c.res.headers.get("content-type")?.startsWith("application/json")) return;
    writableHeaders(c).set("X-Cache", "miss");
    const key = cacheKey(url, viewerClass(scope, c.get("user")));
    const powers = viewerPowers(scope, c.get("user"));
    const contentType = c.res.headers.get("content-type")!;
    const etag = c.res.headers.get("etag");
    const headers = new Headers({
      "Content-Type": contentType,
      "Cache-Control": `max-age=${STORED_SECONDS}`,
      [GENERATION_HEADER]: stamped,
      [POWERS_HEADER]: powers,
    });
    if (etag) headers.set("ETag", etag);
    const shared = cache === undefined ? await openCache(c) : cache;
    // Stored after the answer is sent: the copy's bytes are read from a clone meanwhile.
    const answer = c.res.clone();
    const store = async () => {
      const body = await answer.arrayBuffer();
      recent.set(key, { generation: stamped, powers, etag, contentType, body, scope, recordId });
      if (shared) await shared.put(key, new Response(body, { headers }));
    };
    c.executionCtx.waitUntil(store().catch((error: unknown) => c.get("log").warn("read cache write failed", { error })));
  });
}
