import type { Context } from "hono";

const PROBE = "x-relab-writable";
// Several middleware write headers on the way out; each response is probed only once.
const known = new WeakSet<Response>();

/**
 * The current response's headers, ready to be written. Responses built by the app have mutable
 * headers; one passed through from `fetch()` does not, and is copied once here.
 */
export function writableHeaders(c: Context): Headers {
  if (known.has(c.res)) return c.res.headers;
  try {
    c.res.headers.set(PROBE, "1");
    c.res.headers.delete(PROBE);
  } catch {
    // Hono's `res` setter rebuilds the response with mutable headers, keeping the old ones.
    c.res = new Response(c.res.body, c.res);
  }
  known.add(c.res);
  return c.res.headers;
}

/** `scheme://host[:port]` the request was sent to: the base of the absolute URLs a response names (uploads, say). */
export function requestOrigin(c: Context): string {
  return new URL(c.req.url).origin;
}
