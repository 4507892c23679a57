import { z } from "@hono/zod-openapi";

/** One entry of a 422 response: where in the request, and what is wrong there. */
export interface FieldError {
  pointer: string;
  detail: string;
}

export interface ProblemInit {
  code: string;
  detail: string;
  title?: string;
  errors?: FieldError[];
  /** Extra response headers; a list sends the header once per value (`Set-Cookie`). */
  headers?: Record<string, string | string[]>;
}

/**
 * The one error type of the service. Services and handlers throw it; the error handler in
 * `middleware/error-handler.ts` is the only place that turns it into a response.
 */
export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string | string[]>;

  constructor(status: number, init: ProblemInit) {
    super(init.detail);
    this.status = status;
    this.code = init.code;
    this.title = init.title ?? statusTitle(status);
    this.errors = init.errors;
    this.headers = init.headers ?? {};
  }
}

/**
 * 503 for an authentication flow whose store (D1 for tokens, the counter store for its limits)
 * cannot answer: auth flows fail closed, so the client is told to retry rather than let through.
 */
export function authStoreUnavailable(): ApiError {
  return new ApiError(503, {
    code: "AUTH_STORE_UNAVAILABLE",
    detail: "Sign-in is unavailable right now; try again shortly.",
    headers: { "Retry-After": "5" },
  });
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  409: "Conflict",
  410: "Gone",
  412: "Precondition Failed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  422: "Unprocessable Content",
  428: "Precondition Required",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The HTTP reason phrase of a status, used as the Problem Details `title`. */
export function statusTitle(status: number): string {
  return TITLES[status] ?? (status >= 500 ? "Server Error" : "Client Error");
}

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "about:blank" }),
    title: z.string().openapi({ example: "Unprocessable Content" }),
    status: z.number().int().openapi({ example: 422 }),
    detail: z.string().openapi({ example: "The request did not pass validation." }),
    code: z.string().openapi({
      description: "Stable machine-readable error code.",
      example: "VALIDATION_FAILED",
    }),
    request_id: z.string().openapi({ example: "0f9a3c1e-7d7b-4f7e-9a43-1d2f3b4c5d6e" }),
    errors: z
      .array(
        z.object({
          pointer: z.string().openapi({
            description:
              "JSON Pointer into the request body (`/email`), or `#/query/<name>`, `#/path/<name>`, `#/header/<name>` for parameters.",
            example: "/email",
          }),
          detail: z.string().openapi({ example: "Invalid email address." }),
        }),
      )
      .optional()
      .openapi({ description: "Present on 422 responses: one entry per problem found." }),
  })
  .openapi("ProblemDetails", {
    description: "RFC 9457 Problem Details, sent as `application/problem+json` with every error.",
  });

export type Problem = z.infer<typeof ProblemSchema>;

/** The body of an error response; `type` stays `about:blank`, so `title` is the status phrase and `code` carries the meaning. */
export function problemBody(error: ApiError, requestId: string): Problem {
  return {
    type: "about:blank",
    title: error.title,
    status: error.status,
    detail: error.message,
    code: error.code,
    request_id: requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

/** OpenAPI response entries for the listed error statuses, all pointing at the shared schema. */
export function problemResponses<const S extends readonly number[]>(...statuses: S) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: statusTitle(status),
        content: { "application/problem+json": { schema: ProblemSchema } },
      },
    ]),
  ) as { [K in S[number]]: { description: string; content: { "application/problem+json": { schema: typeof ProblemSchema } } } };
}

/** 404 with a message, and optionally a more specific code (`USER_NOT_FOUND`, ...). */
export const notFound = (detail = "The requested resource does not exist.", code = "NOT_FOUND") => new ApiError(404, { code, detail });

/** The 404 of a path no route serves; identical wherever it is raised, so nothing is revealed. */
export const noSuchPath = () => new ApiError(404, { code: "NOT_FOUND", detail: "No resource exists at this path." });

export const internalError = () => new ApiError(500, { code: "INTERNAL_ERROR", detail: "Internal server error" });
