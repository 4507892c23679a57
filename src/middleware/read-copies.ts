import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { LRUCache } from "lru-cache";
import { carryInNextBatch, flushCarried } from "../db/client";
import type { CarriedEnv } from "../env";
import { matchesIfNoneMatch } from "../lib/etag";
import { HitTally } from "../lib/hit-tally";
import { writableHeaders } from "../lib/http";
import {
  expectedClass,
  generationFrom,
  type ReadScope,
  readVariant,
  type ViewerClass,
  validatorStatement,
  viewerClass,
  viewerPowers,
} from "../services/caching/read-copies";
import { carryTokenCheck, presentedClaims } from "./authenticate";

/** The Workers cache the public reads keep their answers in (per data centre; docs/storage.md "Cached reads"). */
export const CACHE_NAME = "relab-reads";
const GENERATION_HEADER = "X-Read-Generation";
const POWERS_HEADER = "X-Read-Powers";
// Entries are validated on every use, so this only bounds how long an unused one takes space.
const STORED_SECONDS = 86_400;
// The route's own Content-Security-Policy and Vary, kept under names of their own: the Cache API
// would read a stored `Vary` as its own instruction.
const CSP_HEADER = "X-Read-CSP";
const VARY_HEADER = "X-Read-Vary";

/** A cached answer: what `fromCopy` needs to serve it, and the generation it was read at. */
interface Copy {
  generation: string;
  /** The powers of the viewer it was computed for (`viewerPowers`). */
  powers: "" | "admin";
  etag: string | null;
  contentType: string;
  /** The route's own policy (a landing page's) and `Vary` (a negotiated read's), sent again with the copy. */
  csp: string | null;
  vary: string | null;
  body: ArrayBuffer;
  /** Whether the Workers cache holds it too (it is put there once it has been served again from memory). */
  shared: boolean;
}

const MiB = 1024 * 1024;

// The answers this isolate served or stored lately, in its own memory, in front of the Workers
// cache: a hot read then skips the cache lookup too (its I/O and the copy of its body out of the
// cache). The same keys and the same validation as the Workers cache, so it is exactly as current;
// bounded in bytes, well inside the isolate's 128 MB (docs/storage.md "Cached reads").
const recent = new LRUCache<string, Copy>({
  maxSize: 16 * MiB,
  maxEntrySize: 2 * MiB,
  sizeCalculation: (copy, key) => copy.body.byteLength + key.length * 2 + 256,
});

// The generation each validator last read in this isolate (`record:<id>`, `catalogue`). A copy
// of another generation is known to be out of date (generations only move on) or at least not the
// one this isolate last saw: it is read afresh with the validator in the handler's batch, one
// round trip, rather than validated first and then read (two). While people write, most list
// copies are such (every write renews the catalogue's generation). Only a hint: a copy is served
// only when the request's own validator reads its generation.
const lastSeen = new LRUCache<string, string>({ max: 50_000 });

// Per scope, whether looking for copies still pays in this isolate (src/lib/hit-tally.ts): under a
// steady flow of writes, catalogue copies go stale before they are read again.
let tallies = newTallies();

function newTallies(): Record<ReadScope, HitTally> {
  return { record: new HitTally(), catalogue: new HitTally(), shared: new HitTally(), release: new HitTally() };
}

/** Forgets every copy this isolate keeps in memory, the generations it saw and its hit tallies (the Workers cache is untouched). */
export function forgetRecentReads(): void {
  recent.clear();
  lastSeen.clear();
  tallies = newTallies();
}

// The parts of each URL's keys lately worked out (`cacheKey`), so that a hot read does not parse
// and order its query again. Bounded in bytes, as URLs come from anyone.
const keyParts = new LRUCache<string, { head: string; tail: string }>({
  maxSize: 2 * MiB,
  maxEntrySize: 16 * 1024,
  sizeCalculation: (parts, url) => 2 * (url.length + parts.head.length + parts.tail.length) + 128,
});

/**
 * The cache key of a read for a viewer class: the request's origin, path and query, its pairs
 * ordered by name, and the route's variant of the answer (`variant`, e.g. a negotiated type;
 * empty for one kind of answer). The pairs stay as sent (not decoded and encoded again, which maps
 * distinct invalid escapes to one U+FFFD), and pairs of one name keep their order (which a list
 * of values may depend on): two keys are equal only for queries the routes read alike.
 */
export function cacheKey(url: URL | string, viewer: ViewerClass, variant = ""): string {
  const href = typeof url === "string" ? url : url.href;
  let parts = keyParts.get(href);
  if (parts === undefined) {
    const parsed = typeof url === "string" ? new URL(url) : url;
    const pairs = parsed.search.length > 1 ? parsed.search.slice(1).split("&") : [];
    const named = pairs.map((pair) => ({ name: pair.slice(0, pair.includes("=") ? pair.indexOf("=") : pair.length), pair }));
    // Array.prototype.sort is stable: pairs of one name stay in the order they came.
    named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const query = named.map(({ pair }) => pair).join("&");
    parts = { head: `${parsed.protocol}//${parsed.host}/__reads/${parsed.protocol.slice(0, -1)}/`, tail: `${parsed.pathname}?${query}` };
    keyParts.set(href, parts);
  }
  const kind = variant === "" ? "" : `${encodeURIComponent(variant)}/`;
  return `${parts.head}${kind}${encodeURIComponent(viewer)}${parts.tail}`;
}

async function openCache(c: Context<CarriedEnv>): Promise<Cache | null> {
  try {
    return await caches.open(CACHE_NAME);
  } catch (error) {
    c.get("log").warn("read cache unavailable", { error });
    return null;
  }
}

/**
 * The answer of a cached copy: its body and tag, or 304 when the client holds that tag.
 * `X-Cache` only in development: elsewhere it would tell anyone whether somebody asked the same
 * URL lately (search terms, suggestion prefixes).
 */
function fromCopy(c: Context<CarriedEnv>, copy: Copy): Response {
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (c.get("services").config.isDevelopment) headers["X-Cache"] = "hit";
  if (copy.etag) headers.ETag = copy.etag;
  if (copy.vary) headers.Vary = copy.vary;
  if (copy.etag && matchesIfNoneMatch(c.req.header("if-none-match"), copy.etag)) return c.newResponse(null, 304, headers);
  headers["Content-Type"] = copy.contentType;
  if (copy.csp) headers["Content-Security-Policy"] = copy.csp;
  return c.newResponse(copy.body, 200, headers);
}

/** The copy of `key` in this isolate's memory, else in the Workers cache (then remembered in memory too). */
async function lookUp(cache: Cache | null, key: string): Promise<Copy | undefined> {
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
    csp: entry.headers.get(CSP_HEADER),
    vary: entry.headers.get(VARY_HEADER),
    body: await entry.arrayBuffer(),
    shared: true,
  };
  recent.set(key, copy);
  return copy;
}

/**
 * Puts a copy this isolate served again from memory into the Workers cache, after the answer, for
 * the data centre's other isolates. Only then: a copy that a write makes stale before it is read
 * again (under a mixed load, most list copies) costs no write to the Workers cache.
 */
function share(c: Context<CarriedEnv>, key: string, copy: Copy): void {
  copy.shared = true;
  const headers = new Headers({
    "Content-Type": copy.contentType,
    "Cache-Control": `max-age=${STORED_SECONDS}`,
    [GENERATION_HEADER]: copy.generation,
    [POWERS_HEADER]: copy.powers,
  });
  if (copy.etag) headers.set("ETag", copy.etag);
  if (copy.csp) headers.set(CSP_HEADER, copy.csp);
  if (copy.vary) headers.set(VARY_HEADER, copy.vary);
  const put = async () => {
    const cache = await openCache(c);
    if (cache) await cache.put(key, new Response(copy.body, { headers }));
  };
  c.executionCtx.waitUntil(put().catch((error: unknown) => c.get("log").warn("read cache write failed", { error })));
}

/**
 * Authentication and validated caching for a public read (docs/storage.md "Cached reads"), in
 * place of `authenticate("optional")`. A presented access token is checked as there (a bad or
 * revoked one leaves the request anonymous), but its revocation check travels in the same batch
 * as the read's validator, and on a miss in the handler's own first batch, so a signed-in read
 * costs one round trip like an anonymous one (`carryTokenCheck`); the handler gets the viewer
 * with its read (`c.get("viewer")`).
 *
 * The answer of a 200 is kept per viewer class (`ViewerClass`) and per representation the
 * request's Accept header selects (`readVariant`) with the generation its batch read, and served only while the validator reads the same generation in this request's D1
 * session: never older than the database the request reads. Every write that changes what such
 * a read shows renews the generation in its own transaction (the triggers of migrations 0020 and 0021).
 */
export function cachedRead(scope: ReadScope) {
  return createMiddleware<CarriedEnv>(async (c, next) => {
    const svc = c.get("services");
    const presented = scope === "shared" ? null : await presentedClaims(c);
    const idParam = scope === "record" ? c.req.param("id") : undefined;
    const recordId = idParam !== undefined && /^[1-9]\d{0,15}$/.test(idParam) ? Number(idParam) : null;
    // A request that accepts none of the representations gets its 406 from the route, uncached.
    const variant = readVariant(c.req.header("accept"));
    const storable = c.req.method === "GET" && (scope !== "record" || recordId !== null) && variant !== null;
    const url = c.req.url;
    // The class the request is in if its token checks out: the copy is looked up while the check travels.
    const expected = expectedClass(scope, presented?.claims.userId ?? null);
    const expectedKey = storable ? cacheKey(url, expected, variant ?? "") : "";
    // A read that does not look (copies of its scope were hardly ever current lately, and this
    // isolate holds none for its key) is read and answered as an uncached one: nothing stale can
    // come of it, only a copy forgone.
    const cacheable = storable && (recent.has(expectedKey) || tallies[scope].worthLooking());

    let generation: string | null = null;
    const validator = validatorStatement(scope, recordId);
    const validated = scope === "record" ? `record:${recordId}` : "catalogue";
    const settle = (rows: unknown[] | undefined) => {
      generation = generationFrom(rows ?? []);
      if (generation !== null) lastSeen.set(validated, generation);
    };
    const viewer = carryTokenCheck(c, presented, cacheable ? [validator] : [], (rows) => {
      if (cacheable) settle(rows[0]);
    });
    c.set("viewer", viewer);
    if (!cacheable) return next();

    // The Workers cache is opened only when this isolate's memory has no copy.
    const cache: Cache | null | undefined = recent.has(expectedKey) ? undefined : await openCache(c);
    const found = await lookUp(cache ?? null, expectedKey);
    const seen = lastSeen.get(validated);
    const copy = found && (seen === undefined || seen === found.generation) ? found : undefined;
    if (found && !copy) recent.delete(expectedKey);
    if (copy) {
      // A copy is cached for this viewer: the token check and the validator, and nothing else, first.
      await flushCarried(svc.db);
      const user = await viewer.now();
      const current =
        generation !== null &&
        viewerClass(scope, user) === expected &&
        viewerPowers(scope, user) === copy.powers &&
        copy.generation === generation;
      if (current) {
        tallies[scope].record(true);
        if (!copy.shared) share(c, expectedKey, copy);
        return fromCopy(c, copy);
      }
      recent.delete(expectedKey);
      // Stale: the handler's batch reads the generation again, with the answer it stores.
      generation = null;
      carryInNextBatch(svc.db, [validator], (rows) => settle(rows[0]));
    }

    await next();
    const stamped = generation as string | null;
    const user = viewer.settled;
    if (stamped === null || user === undefined || c.res.status !== 200 || !c.res.headers.get("content-type")) return;
    // A miss that could have been a hit: answers never kept (a 404, an error) say nothing about copies.
    tallies[scope].record(false);
    if (svc.config.isDevelopment) writableHeaders(c).set("X-Cache", "miss");
    const key = cacheKey(url, viewerClass(scope, user), variant ?? "");
    const powers = viewerPowers(scope, user);
    const contentType = c.res.headers.get("content-type")!;
    const etag = c.res.headers.get("etag");
    // What the route set itself (the security headers and CORS come later, on the way out).
    const csp = c.res.headers.get("content-security-policy");
    const vary = c.res.headers.get("vary");
    // Kept in memory after the answer is sent (its bytes read from a clone meanwhile); the Workers
    // cache gets it once it is served again (`share`).
    const answer = c.res.clone();
    const store = async () => {
      recent.set(key, { generation: stamped, powers, etag, contentType, csp, vary, body: await answer.arrayBuffer(), shared: false });
    };
    c.executionCtx.waitUntil(store().catch((error: unknown) => c.get("log").warn("read cache write failed", { error })));
  });
}
