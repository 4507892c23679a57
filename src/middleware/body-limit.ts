import { bodyLimit as honoBodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { declaredLength, MULTIPART_ALLOWANCE_BYTES } from "../lib/multipart";
import { ApiError } from "../lib/problem";
import { requestCategory } from "../rate-limits/policy";
import { MAX_RESEARCH_FILE_BYTES } from "../services/media/quotas";

/** Largest request body accepted: 1 MiB, whatever its content type, except on upload routes. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** Whether the request goes to an upload route (the rate limiter's list), which reads its body itself (`readLimitedForm`, lib/multipart.ts). */
function isUploadRequest(request: Request): boolean {
  return requestCategory(request.method, new URL(request.url).pathname) === "upload";
}

const tooLarge = (limit: number) =>
  new ApiError(413, {
    code: "PAYLOAD_TOO_LARGE",
    detail: `Request bodies are limited to ${limit} bytes.`,
  });

// Hono's: by `Content-Length` when there is one, otherwise counted while it buffers the body (at
// most the limit), stopping at the first byte over; the Problem Details 413 is ours.
const oneMebibyte = honoBodyLimit({
  maxSize: MAX_JSON_BODY_BYTES,
  onError: () => {
    throw tooLarge(MAX_JSON_BODY_BYTES);
  },
});

/**
 * 413 for any body over 1 MiB: at once by `Content-Length`, otherwise (chunked) while reading.
 * Multipart is included: form routes (login) buffer their bodies too. Upload routes get a ceiling
 * of the largest file plus framing here, checked by `Content-Length` only, and are not buffered
 * (hono/body-limit would hold a chunked upload of that size in memory); the route then applies the
 * caller's caps while it reads (`readLimitedForm`).
 */
export const bodyLimit = createMiddleware<AppEnv>(async (c, next) => {
  const request = c.req.raw;
  if (!request.body) return next();

  const declared = declaredLength(request);
  if (isUploadRequest(request)) {
    const ceiling = MAX_RESEARCH_FILE_BYTES + MULTIPART_ALLOWANCE_BYTES;
    if (declared !== null && declared > ceiling) throw tooLarge(ceiling);
    return next();
  }
  return oneMebibyte(c, next);
});
