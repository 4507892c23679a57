import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { constraintError, constraintFailure } from "../db/constraint-errors";
import type { AppEnv } from "../env";
import { createLogger } from "../lib/logger";
import { ApiError, authStoreUnavailable, internalError, noSuchPath, problemBody } from "../lib/problem";
import { createMethodLookup } from "../lib/route-matcher";

const PROBLEM_JSON = "application/problem+json";

/** Renders an `ApiError` as `application/problem+json`; the only place errors become responses. */
export function problemResponse(c: Context<AppEnv>, error: ApiError): Response {
  const requestId = c.get("requestId") ?? crypto.randomUUID();
  const headers = new Headers();
  for (const [name, value] of Object.entries(error.headers)) {
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  headers.set("Content-Type", PROBLEM_JSON);
  headers.set("Cache-Control", "no-store");
  return new Response(JSON.stringify(problemBody(error, requestId)), { status: error.status, headers });
}

/** Maps framework exceptions (malformed JSON, media type, body size) to the service's error codes. */
function fromHttpException(error: HTTPException): ApiError {
  switch (error.status) {
    case 400:
      return /malformed json/i.test(error.message)
        ? new ApiError(400, { code: "MALFORMED_JSON", detail: "The request body is not valid JSON." })
        : new ApiError(400, { code: "BAD_REQUEST", detail: "The request could not be read." });
    case 413:
      return new ApiError(413, { code: "PAYLOAD_TOO_LARGE", detail: "The request body is too large." });
    case 415:
      return new ApiError(415, {
        code: "UNSUPPORTED_MEDIA_TYPE",
        detail: "This route does not accept that Content-Type; see the OpenAPI schema for the accepted types.",
      });
    default:
      return error.status >= 500
        ? internalError()
        : new ApiError(error.status, { code: "HTTP_ERROR", detail: "The request could not be processed." });
  }
}

export const onError: ErrorHandler<AppEnv> = (error, c) => {
  // A constraint the database enforced is the request's fault (or a lost race), and the store
  // answered, so it is a client error even in an auth flow. It got past validation, so it is logged.
  const failure = error instanceof ApiError || error instanceof HTTPException ? null : constraintFailure(error);
  if (failure) {
    const log = c.get("log") ?? createLogger({ request_id: c.get("requestId") });
    log.warn("constraint failure answered as a client error", {
      method: c.req.method,
      path: c.req.path,
      constraint: `${failure.kind} ${failure.target}`.trim(),
    });
    return problemResponse(c, constraintError(failure));
  }

  // Auth flows fail closed: whatever broke underneath (D1 unreachable, most likely), they refuse
  // rather than guess. Matching D1's message wording instead would miss failures worded otherwise.
  if (c.get("authFlow") && !(error instanceof ApiError) && !(error instanceof HTTPException)) {
    const log = c.get("log") ?? createLogger({ request_id: c.get("requestId") });
    log.error("token store unavailable", { method: c.req.method, path: c.req.path, error });
    return problemResponse(c, authStoreUnavailable());
  }

  if (error instanceof ApiError) {
    // A 5xx the code raised on purpose (a store unreachable, say) is still an outage to see.
    if (error.status >= 500) {
      const log = c.get("log") ?? createLogger({ request_id: c.get("requestId") });
      log.error("server error", { status: error.status, error_code: error.code, detail: error.message });
    }
    return problemResponse(c, error);
  }
  if (error instanceof HTTPException) return problemResponse(c, fromHttpException(error));
  // Anything else is a bug or an outage: full detail to the log, nothing of it to the client.
  const log = c.get("log") ?? createLogger({ request_id: c.get("requestId") });
  log.error("unhandled exception", { method: c.req.method, path: c.req.path, error });
  return problemResponse(c, internalError());
};

/** 404 for unknown paths, or 405 with `Allow` when the path exists with other methods. */
export function createNotFoundHandler(routes: readonly { method: string; path: string }[]): NotFoundHandler<AppEnv> {
  const methodsFor = createMethodLookup(routes);
  return (c) => {
    const allowed = methodsFor(c.req.path);
    if (allowed.length > 0) {
      return problemResponse(
        c,
        new ApiError(405, {
          code: "METHOD_NOT_ALLOWED",
          detail: `This resource supports ${allowed.join(", ")}.`,
          headers: { Allow: allowed.join(", ") },
        }),
      );
    }
    return problemResponse(c, noSuchPath());
  };
}
