import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { audit } from "../../lib/audit";
import { ApiError } from "../../lib/problem";

/** The caches an administrator can clear; every cached value lives under one of them in KV. */
export const CACHE_NAMESPACES = ["reference-data", "stats"] as const;
export type CacheNamespace = (typeof CACHE_NAMESPACES)[number];

/**
 * How long a cached answer lives without a clear. Reference data changes only through admin
 * writes, which clear it; statistics move with every new record, so they may lag by minutes.
 */
export const CACHE_TTL_SECONDS: Record<CacheNamespace, number> = { "reference-data": 3600, stats: 300 };

/** The KV key of a cached value: `cache:<namespace>:<key>`, so a namespace is cleared by its prefix. */
export function cacheKey(namespace: CacheNamespace, key: string): string {
  return `${cachePrefix(namespace)}${key}`;
}

function cachePrefix(namespace: CacheNamespace): string {
  return `cache:${namespace}:`;
}

/**
 * The key that records when a namespace was last cleared (ms). It lies outside the namespace's
 * prefix, so a clear never deletes it. A cached value computed before it is stale even if it was
 * written after the clear: a read that started before an admin write may finish after it.
 */
export function clearedAtKey(namespace: CacheNamespace): string {
  return `cache-cleared:${namespace}`;
}

export function isCacheNamespace(name: string): name is CacheNamespace {
  return (CACHE_NAMESPACES as readonly string[]).includes(name);
}

function unknownNamespace(): ApiError {
  return new ApiError(404, {
    code: "CACHE_NAMESPACE_NOT_FOUND",
    detail: `No cache has this name; the caches are ${CACHE_NAMESPACES.join(" and ")}.`,
  });
}

/**
 * Deletes every key of a cache namespace, following the list cursor to the end; returns how many
 * keys it deleted. KV has no bulk delete in a binding, so each key is one delete, run a page (up
 * to 1,000 keys) at a time. KV listings are eventually consistent: a value cached moments ago
 * elsewhere may survive one clear, which is fine for caches that also expire.
 */
export async function clearCache(svc: Pick<Services, "bindings" | "log">, actor: SessionUser, namespace: string): Promise<number> {
  if (!isCacheNamespace(namespace)) throw unknownNamespace();
  const deleted = await dropNamespace(svc.bindings.KV, namespace);
  audit(svc.log, "admin.cache.cleared", { actor_id: actor.id, namespace, keys_deleted: deleted });
  return deleted;
}

/**
 * Deletes every cached value of `namespace`; returns how many. Admin writes call it for
 * `reference-data`. The clear marker goes first (a read in flight must not write its old answer
 * back as fresh); KV takes one write a second per key, so a refused marker does not stop the
 * deletes, and is written again a second later.
 */
export async function dropNamespace(kv: KVNamespace, namespace: CacheNamespace): Promise<number> {
  const marked = await kv.put(clearedAtKey(namespace), String(Date.now())).then(
    () => true,
    () => false,
  );
  let deleted = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await kv.list({ prefix: cachePrefix(namespace), ...(cursor === undefined ? {} : { cursor }) });
    await Promise.all(page.keys.map((key) => kv.delete(key.name)));
    deleted += page.keys.length;
    if (page.list_complete) break;
    cursor = page.cursor;
  }
  if (!marked) {
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await kv.put(clearedAtKey(namespace), String(Date.now()));
  }
  return deleted;
}

/**
 * Clears `namespace` after a committed write, before the write answers, so the writer's next read
 * sees the change. The write has happened either way: a KV failure is logged, not turned into an
 * error (the namespace's TTL bounds how long a stale answer can live).
 */
export async function clearAfterWrite(svc: Pick<Services, "bindings" | "log">, namespace: CacheNamespace): Promise<void> {
  try {
    await dropNamespace(svc.bindings.KV, namespace);
  } catch (error) {
    svc.log.error("cache not cleared after a write", { namespace, error });
  }
}
