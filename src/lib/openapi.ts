import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";

/** Version of the public contract under `/v1`, reported in the schema's `info.version`. */
export const API_VERSION = "1.0.0";

/** Names of the security schemes routes refer to in their `security` member. */
export const SECURITY = { bearer: "bearerAuth", cookie: "cookieAuth" } as const;

/** `security` of a route that needs a signed-in user: a bearer token or the session cookie. */
export const SIGNED_IN: Record<string, string[]>[] = [{ [SECURITY.bearer]: [] }, { [SECURITY.cookie]: [] }];

/** A tag of the document, with its description. */
export interface OpenApiTag {
  name: string;
  description: string;
}

const TAGS: OpenApiTag[] = [
  { name: "Auth", description: "Registration, sign-in over bearer tokens or cookie sessions, and account recovery." },
  { name: "Users", description: "Your own account: profile, preferences, email and password changes." },
  { name: "Products", description: "Base products and their components, nested to any depth, with bills of materials and videos." },
  {
    name: "Media",
    description:
      "Images and research files of base products and components (sanitised, malware-scanned, thumbnailed), videos of base products, and the downloads under `/uploads`.",
  },
  { name: "Reference data", description: "Public lookups: taxonomies, categories, materials, product types, units." },
  { name: "Statistics", description: "Public aggregate counts over the dataset, cached for a few minutes." },
  {
    name: "Releases",
    description:
      "Published dataset releases: immutable, citable snapshots of the dataset as CSV and Parquet, with datapackage.json, SHA256SUMS and a README.",
  },
  { name: "Admin", description: "Superusers with TOTP only: users, roles, MFA resets, account deletion, caches, dataset releases." },
];

const DESCRIPTION = `Structured research data about products taken apart for study.

Every route lives under \`/v1\`, except the media downloads under \`/uploads\` that media records
link to; keep the base URL and the \`/v1\` prefix as separate client settings.
Errors are RFC 9457 Problem Details (\`application/problem+json\`) with a stable \`code\` and the
\`request_id\` that is also sent as \`X-Request-ID\`. Send your own \`X-Request-ID\` (up to 128
characters of letters, digits and \`._:-\`) to correlate logs; otherwise one is generated.

Browsers sign in with cookie sessions; apps and scripts with bearer tokens.

## Text and JSON

Text members (names, brands, models, titles, descriptions, search and filter text) refuse the
control characters U+0000 to U+001F (422 at the member; descriptions and notes allow tab, line
feed and carriage return) and unpaired surrogates; lengths count characters. Free-form JSON
members (\`video_metadata\`, \`image_metadata\`, a camera command's \`body\` and \`params\`) hold
at most 10 levels of nesting, 500 keys and 16 KiB (a camera command: one 64 KiB tunnel frame);
any JSON body nested past 64 levels is 422.

## Rate limits

Every \`/v1\` request counts against a bucket: per client IP when anonymous (reads 300, writes
120, uploads 30 a minute), per user with a valid access token (reads 1,500, writes 600, uploads 300
a minute). Exports have their own, stricter limits per IP (30 a minute anonymous; signed in,
90 a minute per IP on top of the user's read bucket). Sign-in, registration, verification and
password-reset routes have further per-IP limits, and failed logins are limited to 3 a minute per
email address and per username. Responses carry \`RateLimit-Policy\` (each
policy's quota \`q\` and window \`w\` in seconds) and \`RateLimit\` (remaining \`r\` and seconds
to reset \`t\`). A refused request is 429 \`RATE_LIMITED\` with \`Retry-After\` in seconds; wait
that long before retrying.

## Reading your own writes

Reads may be served by a database replica near you, which can lag the primary by a moment.
Every \`/v1\` response that touched the database carries \`X-D1-Bookmark\`: the database state it
saw. Send the latest bookmark you received back as the request header \`X-D1-Bookmark\` and the
read sees a state at least that recent, your own writes included. Writes and signed-in requests
always start on the primary; an unreadable bookmark is ignored.

Product and component details, component pages and trees, the product list, facets and
suggestions may be answered from a cache at the edge (\`X-Cache: hit\` in development), only after checking in
the database that nothing they show has changed since, and never across viewers: they are as
current as a read of the database itself.`;

/** `X-D1-Bookmark`, as request parameter and response header of every `/v1` operation. */
const BOOKMARK_PARAMETER = {
  name: "X-D1-Bookmark",
  in: "header" as const,
  required: false,
  description:
    "The latest `X-D1-Bookmark` this client received: the read then sees a database state at least that recent (its own writes). Ignored when unreadable.",
  schema: { type: "string" as const, maxLength: 256 },
};
const BOOKMARK_RESPONSE_HEADER = {
  description:
    "The D1 session bookmark of the database state this request saw (or the one it was sent, if it read nothing); send it back to read your own writes.",
  schema: { type: "string" as const },
};

const RATE_LIMITED_RESPONSE = {
  description: "Too many requests: a rate limit of this route or of the caller is spent. Retry after `Retry-After` seconds.",
  headers: {
    "Retry-After": { description: "Seconds until the spent limit's window ends.", schema: { type: "integer", minimum: 1 } },
    RateLimit: {
      description: 'Remaining requests and seconds to reset per policy, e.g. `"read-ip";r=0;t=42`.',
      schema: { type: "string" },
    },
    "RateLimit-Policy": { description: 'Quota and window per policy, e.g. `"read-ip";q=300;w=60`.', schema: { type: "string" } },
  },
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } } },
};

/** Registers the bearer and cookie security schemes on the root app's registry. */
export function registerSecuritySchemes(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", SECURITY.bearer, {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Access token from `POST /v1/auth/bearer/login`; valid for 15 minutes.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", SECURITY.cookie, {
    type: "apiKey",
    in: "cookie",
    name: "__Host-relab-auth",
    description: "Browser session cookie set by `POST /v1/auth/session/login`.",
  });
}

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

// The limiter runs in front of every /v1 route, so every operation can answer 429.
function addRateLimitedResponses(document: Document): void {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith("/v1/") || !item) continue;
    for (const method of ["get", "put", "post", "delete", "patch", "head"] as const) {
      const operation = item[method];
      if (operation?.responses && !operation.responses["429"]) operation.responses["429"] = RATE_LIMITED_RESPONSE;
    }
  }
}

const CROSS_SITE_REFUSED_RESPONSE = {
  description:
    "Forbidden: a cross-site request carrying the session cookies (`Sec-Fetch-Site: cross-site`, or an `Origin` outside the allow-list) is refused with `CROSS_SITE_REQUEST_REFUSED`.",
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } } },
};

// The cross-site check runs in front of every /v1 write, so every write can answer 403.
function addCrossSiteResponses(document: Document): void {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith("/v1/") || !item) continue;
    for (const method of ["put", "post", "delete", "patch"] as const) {
      const operation = item[method];
      if (operation?.responses && !operation.responses["403"]) operation.responses["403"] = CROSS_SITE_REFUSED_RESPONSE;
    }
  }
}

const CONSTRAINT_RESPONSES = {
  "409": {
    description:
      "Conflict: a write that a unique constraint refused after validation passed (a race lost to another request, say) is `ALREADY_EXISTS`, with `errors` naming the member when the constraint does.",
    content: { "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } } },
  },
  "422": {
    description:
      "Unprocessable Content: `VALIDATION_FAILED`, with `errors` pointing at the members; also a write that a table constraint refused after validation passed.",
    content: { "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } } },
  },
};

// Constraint failures are mapped once, in the error handler, for every write (docs/conventions.md,
// "Constraint failures"), so every write can answer them.
function addConstraintResponses(document: Document): void {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith("/v1/") || !item) continue;
    for (const method of ["put", "post", "delete", "patch"] as const) {
      const operation = item[method];
      if (!operation?.responses) continue;
      for (const [status, response] of Object.entries(CONSTRAINT_RESPONSES)) operation.responses[status] ??= response;
    }
  }
}

// A path parameter with a router pattern (`{path{.+}}`, one that may hold slashes) is `{path}` in the document.
function plainPathParameters(document: Document): void {
  if (!document.paths) return;
  for (const path of Object.keys(document.paths)) {
    const plain = path.replace(/\{([A-Za-z0-9_]+)\{[^/]*\}\}/g, "{$1}");
    if (plain === path) continue;
    document.paths[plain] = document.paths[path]!;
    delete document.paths[path];
  }
}

// Every /v1 request runs in a D1 session (docs/storage.md "Read replicas").
function addBookmarkHeaders(document: Document): void {
  document.components ??= {};
  document.components.parameters = { ...document.components.parameters, D1Bookmark: BOOKMARK_PARAMETER };
  document.components.headers = { ...document.components.headers, "X-D1-Bookmark": BOOKMARK_RESPONSE_HEADER };
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith("/v1/") || !item) continue;
    for (const method of ["get", "put", "post", "delete", "patch", "head"] as const) {
      const operation = item[method];
      if (!operation) continue;
      operation.parameters = [...(operation.parameters ?? []), { $ref: "#/components/parameters/D1Bookmark" }];
      const responses = operation.responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        if (!response || "$ref" in response) continue;
        // A copy: the shared responses (429, 403, ...) are the same object in every operation.
        responses[status] = {
          ...response,
          headers: { ...response.headers, "X-D1-Bookmark": { $ref: "#/components/headers/X-D1-Bookmark" } },
        };
      }
    }
  }
}

const PROBLEM_CONTENT = { "application/problem+json": { schema: { $ref: "#/components/schemas/ProblemDetails" } } };
const PAYLOAD_TOO_LARGE_RESPONSE = {
  description:
    "Content Too Large: `PAYLOAD_TOO_LARGE`, a body over 1 MiB (upload routes: over the caller's caps), whether or not the route reads one.",
  content: PROBLEM_CONTENT,
};
const MALFORMED_JSON_RESPONSE = { description: "Bad Request: `MALFORMED_JSON`, a body that is not valid JSON.", content: PROBLEM_CONTENT };

// The body limit runs in front of every route, so every /v1 write can answer 413; a route that
// reads JSON answers a body that does not parse with 400, whatever else it documents.
function addBodyResponses(document: Document): void {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith("/v1/") || !item) continue;
    for (const method of ["put", "post", "delete", "patch"] as const) {
      const operation = item[method];
      if (!operation?.responses) continue;
      operation.responses["413"] ??= PAYLOAD_TOO_LARGE_RESPONSE;
      const body = operation.requestBody;
      if (body && "content" in body && body.content["application/json"]) operation.responses["400"] ??= MALFORMED_JSON_RESPONSE;
    }
  }
}

const documents = new WeakMap<object, Document>();

const extraTags = new WeakMap<object, OpenApiTag[]>();

/** Adds tags to the document of `app` (a plugin's, when its routes are mounted). */
export function registerTags(app: OpenAPIHono<AppEnv>, tags: readonly OpenApiTag[]): void {
  extraTags.set(app, [...(extraTags.get(app) ?? []), ...tags]);
}

/**
 * The OpenAPI 3.1 document of `app`, generated once per isolate; `serverUrl` (the request's
 * origin) is filled in per call.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, serverUrl: string): Document {
  let document = documents.get(app);
  if (!document) {
    document = app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "relab research-data API", version: API_VERSION, description: DESCRIPTION },
      tags: [...TAGS, ...(extraTags.get(app) ?? [])],
    });
    plainPathParameters(document);
    addRateLimitedResponses(document);
    addCrossSiteResponses(document);
    addConstraintResponses(document);
    addBodyResponses(document);
    addBookmarkHeaders(document);
    documents.set(app, document);
  }
  return { ...document, servers: [{ url: serverUrl, description: "This deployment" }] };
}
