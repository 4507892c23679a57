import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/problem";

/** Largest request body accepted: 1 MiB, whatever its content type. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

const tooLarge = () =>
  new ApiError(413, {
    code: "PAYLOAD_TOO_LARGE",
    detail: `Request bodies are limited to ${MAX_JSON_BODY_BYTES} bytes.`,
  });

/**
 * 413 for any body over 1 MiB: at once by `Content-Length`, otherwise (chunked) while reading,
 * cancelling the rest of the upload. Multipart is included: form routes (login) buffer their
 * bodies too. Upload routes that need more will declare their own caps here.
 */
export const bodyLimit = createMiddleware<AppEnv>(async (c, next) => {
  const request = c.req.raw;
  if (!request.body) return next();

  const declared = request.headers.get("content-length");
  if (declared !== null && !request.headers.has("transfer-encoding")) {
    if (Number(declared) > MAX_JSON_BODY_BYTES) throw tooLarge();
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
      throw tooLarge();
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
