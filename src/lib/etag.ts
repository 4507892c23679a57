import type { Context } from "hono";
import { toBase64Url } from "./encoding";

/** A strong ETag over a JSON body: the first 128 bits of its SHA-256, base64url, quoted. */
export async function etagOf(body: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
  return `"${toBase64Url(digest.subarray(0, 16))}"`;
}

/** Whether an `If-None-Match` header names `etag` (or is `*`); weak and strong forms compare alike (RFC 9110 weak comparison). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((candidate) => candidate.trim().replace(/^W\//, "") === etag);
}

/**
 * Answers a viewer-dependent JSON read with an `ETag` over the whole body, or 304 when the
 * client's `If-None-Match` already names it. `Cache-Control: no-store` keeps shared caches out.
 */
export async function jsonWithEtag(c: Context, payload: unknown): Promise<Response> {
  const body = JSON.stringify(payload);
  const etag = await etagOf(body);
  const headers = { ETag: etag, "Cache-Control": "no-store" };
  if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
  return c.body(body, 200, { ...headers, "Content-Type": "application/json" });
}
