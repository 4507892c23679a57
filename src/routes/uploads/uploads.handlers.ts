import type { Context } from "hono";
import type { AppEnv, AppRouteHandler } from "../../env";
import { matchesIfNoneMatch } from "../../lib/etag";
import { parseRange } from "../../lib/http-range";
import { ApiError, notFound } from "../../lib/problem";
import { THUMBNAIL_WIDTHS, thumbnailKey } from "../../services/media/records";
import { IMMUTABLE_CACHE, type MediaKind, servedKey } from "../../services/media/storage";
import type * as routes from "./uploads.routes";

/** Content keys: 64 hex digits and an extension. Anything else cannot exist, so it is a 404 without a storage read. */
const CONTENT_KEY = /^[0-9a-f]{64}\.[a-z0-9]{1,5}$/;

const missing = () => notFound("No upload exists at this path.");

/** The headers of a served object, on 200, 206 and 304 alike. */
function servedHeaders(object: R2Object, kind: MediaKind): Headers {
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  if (!headers.has("Content-Type")) headers.set("Content-Type", "application/octet-stream");
  headers.set("Cache-Control", IMMUTABLE_CACHE);
  headers.set("ETag", object.httpEtag);
  headers.set("Accept-Ranges", "bytes");
  // Nothing served here may run as a document, and the app (another origin) may embed it.
  headers.set("Content-Security-Policy", "default-src 'none'; sandbox");
  headers.set("Cross-Origin-Resource-Policy", "cross-origin");
  if (kind === "files") headers.set("Content-Disposition", "attachment");
  return headers;
}

/** Streams one stored object: conditional (ETag), single-range and HEAD aware. */
async function serve(c: Context<AppEnv>, kind: MediaKind, path: string): Promise<Response> {
  const bucket = c.get("services").bindings.UPLOADS;
  const key = servedKey(kind, path);
  const rangeHeader = c.req.header("range");
  const ifNoneMatch = c.req.header("if-none-match");
  // If-None-Match is evaluated before Range (RFC 9110, 13.2.2); both need only the metadata.
  if (rangeHeader || ifNoneMatch) {
    const head = await bucket.head(key);
    if (!head) throw missing();
    if (matchesIfNoneMatch(ifNoneMatch, head.httpEtag)) return new Response(null, { status: 304, headers: servedHeaders(head, kind) });
    const range = parseRange(rangeHeader, head.size);
    if (range === "unsatisfiable") {
      throw new ApiError(416, {
        code: "RANGE_NOT_SATISFIABLE",
        detail: `The range lies outside the ${head.size} bytes of this upload.`,
        headers: { "Content-Range": `bytes */${head.size}` },
      });
    }
    if (range) {
      const object = await bucket.get(key, { range });
      if (!object) throw missing();
      const headers = servedHeaders(object, kind);
      headers.set("Content-Range", `bytes ${range.offset}-${range.offset + range.length - 1}/${object.size}`);
      headers.set("Content-Length", String(range.length));
      return new Response(object.body, { status: 206, headers });
    }
  }
  const object = await bucket.get(key);
  if (!object) throw missing();
  const headers = servedHeaders(object, kind);
  headers.set("Content-Length", String(object.size));
  return new Response(object.body, { status: 200, headers });
}

export const getImage: AppRouteHandler<typeof routes.getImage> = async (c) => {
  const { key } = c.req.valid("param");
  if (!CONTENT_KEY.test(key)) throw missing();
  return serve(c, "images", key);
};

export const getThumbnail: AppRouteHandler<typeof routes.getThumbnail> = async (c) => {
  const { width, key } = c.req.valid("param");
  if (!CONTENT_KEY.test(key) || !THUMBNAIL_WIDTHS.some((w) => String(w) === width)) throw missing();
  return serve(c, "images", thumbnailKey(key, Number(width)));
};

export const getFile: AppRouteHandler<typeof routes.getFile> = async (c) => {
  const { key } = c.req.valid("param");
  if (!CONTENT_KEY.test(key)) throw missing();
  return serve(c, "files", key);
};
