import { ApiError } from "./problem";

/** Room for the multipart framing and the text fields around an upload's file part. */
export const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;

/** The declared length of a request body that is not chunked, or null. */
export function declaredLength(request: Request): number | null {
  const declared = request.headers.get("content-length");
  if (declared === null || request.headers.has("transfer-encoding")) return null;
  return Number(declared);
}

/**
 * Parses a multipart body of at most `limit` bytes. A declared length over it is refused before a
 * byte is read; a chunked body is counted as it streams and cut off past it, so no more than
 * `limit` bytes are ever buffered. 413 over the limit, 415 for a body that is not multipart, 400
 * for broken multipart.
 */
export async function readLimitedForm(request: Request, limit: number, tooLargeDetail: string): Promise<FormData> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw new ApiError(415, {
      code: "UNSUPPORTED_MEDIA_TYPE",
      detail: "Uploads are multipart/form-data with the file in a part named `file`.",
    });
  }
  const declared = declaredLength(request);
  if (declared !== null && declared > limit) throw new ApiError(413, { code: "PAYLOAD_TOO_LARGE", detail: tooLargeDetail });
  let exceeded = false;
  let body = request.body;
  if (body && declared === null) {
    let size = 0;
    body = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > limit) {
            exceeded = true;
            controller.error(new Error("upload over its limit"));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
  }
  try {
    return await new Request(request.url, { method: "POST", headers: request.headers, body }).formData();
  } catch {
    if (exceeded) throw new ApiError(413, { code: "PAYLOAD_TOO_LARGE", detail: tooLargeDetail });
    throw new ApiError(400, { code: "MALFORMED_MULTIPART", detail: "The multipart body could not be parsed." });
  }
}
