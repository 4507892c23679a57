import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { declaredLength, MULTIPART_ALLOWANCE_BYTES } from "../lib/multipart";
import { ApiError } from "../lib/problem";
import { requestCategory } from "../lib/rate-limits";
import { MAX_RESEARCH_FILE_BYTES } from "../services/quotas";

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

/**
 * 413 for any body over 1 MiB: at once by `Content-Length`, otherwise (chunked) while reading,
 * cancelling the rest of the upload. Multipart is included: form routes (login) buffer their
 * bodies too. Upload routes get a ceiling of the largest file plus framing here, checked by
 * `Content-Length` only; the route then applies the caller's caps while it reads.
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
  if (declared !== null) {
    if (declared > MAX_JSON_BODY_BYTES) throw tooLarge(MAX_JSON_BODY_BYTES);
    return next();
  }

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JSON_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge(MAX_JSON_BODY_BYTES);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  c.req.raw = new Request(request, { body });
  await next();
});
