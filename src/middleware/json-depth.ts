import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { jsonTextDeeperThan, MAX_JSON_BODY_DEPTH, pathBeyondDepth } from "../lib/json-bounds";
import { ApiError } from "../lib/problem";
import { pointerFor } from "../lib/validation";
import { requestCategory } from "../rate-limits/policy";

// The content types the JSON validators read (those of @hono/zod-openapi).
const JSON_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * Refuses a JSON body nested deeper than `MAX_JSON_BODY_DEPTH` levels before any validator
 * walks it: schemas that nest (components in components) recurse once per level, and a body of
 * 1 MiB can nest tens of thousands of levels. 422 at the first container too deep. The bytes are
 * scanned without parsing; only a body over the limit is parsed, to name the place. A body that
 * is not JSON passes on, for the validator to refuse. The bytes read stay cached for the route.
 * Upload routes read their own (multipart) bodies under their own caps and are left alone.
 */
export const jsonDepthGuard = createMiddleware<AppEnv>(async (c, next) => {
  const type = c.req.header("content-type");
  if (!c.req.raw.body || !type || !JSON_TYPE.test(type)) return next();
  if (requestCategory(c.req.method, c.req.path) === "upload") return next();
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  if (!jsonTextDeeperThan(bytes, MAX_JSON_BODY_DEPTH)) return next();
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return next();
  }
  const path = pathBeyondDepth(value, MAX_JSON_BODY_DEPTH);
  if (path === null) return next();
  throw new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request did not pass validation.",
    errors: [{ pointer: pointerFor("json", path), detail: `Nested deeper than ${MAX_JSON_BODY_DEPTH} levels.` }],
  });
});
