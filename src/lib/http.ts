import type { Context } from "hono";

const PROBE = "x-relab-writable";

/**
 * The current response's headers, ready to be written. Responses built by the app have mutable
 * headers; one passed through from `fetch()` does not, and is copied once here.
 */
export function writableHeaders(c: Context): Headers {
  const headers = c.res.headers;
  try {
    headers.set(PROBE, "1");
    headers.delete(PROBE);
    return headers;
  } catch {
    // Hono's `res` setter rebuilds the response with mutable headers, keeping the old ones.
    c.res = new Response(c.res.body, c.res);
    return c.res.headers;
  }
}
