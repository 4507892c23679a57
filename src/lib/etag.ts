import type { Context, TypedResponse } from "hono";
import type { JSONParsed } from "hono/utils/types";
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

/** The two answers of an ETag'd JSON read, typed as a route's 200 (the payload) and 304 (no body) responses. */
export type JsonWithEtag<T> = (Response & TypedResponse<JSONParsed<T>, 200, "json">) | (Response & TypedResponse<{}, 304, string>);

/**
 * Answers a viewer-dependent JSON read with an `ETag` over the whole body, or 304 when the
 * client's `If-None-Match` already names it. `Cache-Control: no-store` keeps shared caches out.
 */
export async function jsonWithEtag<T>(c: Context, payload: T): Promise<JsonWithEtag<T>> {
  const body = JSON.stringify(payload);
  const etag = await etagOf(body);
  const headers = { ETag: etag, "Cache-Control": "no-store" };
  // The body is serialised once, for the tag and the answer alike, so the answer is built as bytes
  // and typed here as what `c.json(payload, 200)` and a bodiless 304 would have been.
  if (matchesIfNoneMatch(c.req.header("if-none-match"), etag)) return c.newResponse(null, 304, headers) as JsonWithEtag<T>;
  return c.newResponse(body, 200, { ...headers, "Content-Type": "application/json" }) as JsonWithEtag<T>;
}
