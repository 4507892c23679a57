import { sha256 } from "@noble/hashes/sha2.js";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { toHex } from "../lib/encoding";
import { CACHE_TTL_SECONDS, type CacheNamespace, cacheKey, clearedAtKey } from "../services/caching/kv-cache";
import { generationFrom, validatorStatement } from "../services/caching/read-copies";

const encoder = new TextEncoder();

// Keys this isolate wrote in the last second (or is writing): KV takes one write a second per key,
// and a burst of misses for one key (a cold cache under load) needs only one of them stored.
const recentWrites = new Map<string, number>();
const WRITE_SPACING_MS = 1_000;

function claimWrite(key: string, now: number): boolean {
  const last = recentWrites.get(key);
  if (last !== undefined && now - last < WRITE_SPACING_MS) return false;
  recentWrites.set(key, now);
  if (recentWrites.size > 1_000) {
    for (const [name, at] of recentWrites) if (now - at >= WRITE_SPACING_MS) recentWrites.delete(name);
  }
  return true;
}

interface CachedMeta {
  cacheControl: string | null;
  /** When the request that computed the value started (ms). */
  computedAt: number;
  /** The catalogue's generation read before the value was computed (`freshAfterWrites` only). */
  generation?: string;
}

/**
 * Whether an answer may be stored: not for free-text or range filters (`search`, `name[ilike]`,
 * `density_kg_m3[ge]`, ...), whose values are unbounded, nor for numbers written in a second
 * spelling (`page=01`), nor for an empty page. Otherwise anyone could fill KV with keys of one
 * answer each, and a clear would have to delete them all. Such requests are still answered, from D1.
 */
export function worthStoring(url: URL, body: string): boolean {
  for (const [name, value] of url.searchParams) {
    if (name === "search" || name.includes("[")) return false;
    if (/^[+-]?0\d|^\s|\s$/.test(value)) return false;
  }
  return !/^\{"items":\[\]/.test(body);
}

/** The request's cache key: its path and its query parameters in a canonical order; long ones are hashed (KV keys stop at 512 bytes). */
function requestKey(url: URL): string {
  const params = [...url.searchParams.entries()].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  const query = new URLSearchParams(params).toString();
  const key = query ? `${url.pathname}?${query}` : url.pathname;
  return key.length <= 256 ? key : `sha256:${toHex(sha256(encoder.encode(key)))}`;
}

/**
 * Caches the 200 JSON answers of a public GET route in KV under `namespace` (cleared by
 * `POST /v1/admin/cache/clear/{namespace}`, and by every admin write to reference data), for the
 * namespace's TTL. Answers are the same for every viewer, so one copy serves all. A hit says
 * `X-Cache: hit` (in development) and costs no D1 round trip (with `freshAfterWrites`, one: the generation check). KV trouble never fails a read: it is logged and the
 * route answers from D1 (a cache fails open). The write happens after the response is sent, so
 * a value also records when its computation started: one computed before the namespace's last
 * clear is ignored, even when a slow read wrote it back after the clear.
 */
export function cacheResponse(namespace: CacheNamespace, options: { freshAfterWrites?: boolean } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const url = new URL(c.req.url);
    const key = cacheKey(namespace, requestKey(url));
    const svc = c.get("services");
    const kv = svc.bindings.KV;
    const startedAt = Date.now();
    let stored: { value: string | null; metadata: CachedMeta | null } = { value: null, metadata: null };
    let clearedAt = 0;
    // With `freshAfterWrites`, the catalogue's generation (renewed in the transaction of every
    // write to records, bills of materials and media, migration 0020) is read with the cache:
    // a value is served only while it is the one the value was computed at. Read before the
    // value is computed, so a write landing meanwhile leaves the value stored as stale, never
    // the other way round. Null when it cannot be read: nothing is served from the cache then.
    const generation = options.freshAfterWrites
      ? svc.db
          .all(validatorStatement("catalogue", null))
          .then(generationFrom)
          .catch((error: unknown) => {
            c.get("log").warn("cache validator read failed", { namespace, error });
            return null;
          })
      : Promise.resolve(undefined);
    try {
      // The reads at once: the clear marker (and the generation) cost no extra latency.
      const [value, marker] = await Promise.all([kv.getWithMetadata<CachedMeta>(key), kv.get(clearedAtKey(namespace))]);
      stored = value;
      clearedAt = Number(marker ?? 0);
    } catch (error) {
      c.get("log").warn("cache read failed", { namespace, error });
    }
    const current = await generation;
    const fresh =
      stored.value !== null &&
      (stored.metadata?.computedAt ?? 0) > clearedAt &&
      (current === undefined || (current !== null && stored.metadata?.generation === current));
    // `X-Cache` in development only: elsewhere it would tell whether somebody asked the same URL lately.
    const reportsCache = c.get("services").config.isDevelopment;
    if (fresh) {
      if (reportsCache) c.header("X-Cache", "hit");
      c.header("Content-Type", "application/json");
      if (stored.metadata?.cacheControl) c.header("Cache-Control", stored.metadata.cacheControl);
      return c.body(stored.value!, 200);
    }
    await next();
    if (reportsCache) c.res.headers.set("X-Cache", "miss");
    if (c.res.status !== 200 || !c.res.headers.get("content-type")?.startsWith("application/json")) return;
    const body = await c.res.clone().text();
    if (!worthStoring(url, body) || !claimWrite(key, Date.now())) return;
    // The route's own Cache-Control (browser caching) is kept with the value, so a hit sends it too.
    if (current === null) return;
    const metadata: CachedMeta = {
      cacheControl: c.res.headers.get("cache-control"),
      computedAt: startedAt,
      ...(current !== undefined && { generation: current }),
    };
    c.executionCtx.waitUntil(
      kv.put(key, body, { expirationTtl: CACHE_TTL_SECONDS[namespace], metadata }).catch((error: unknown) => {
        c.get("log").warn("cache write failed", { namespace, error });
      }),
    );
  });
}
