// A typed client for the relab API: openapi-fetch over the types that openapi-typescript
// generated from the API's OpenAPI document (schema.d.ts). Every path, parameter, body, answer
// and Problem Details error is checked by the TypeScript compiler.
import createClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";
import type { components, operations, paths } from "./schema";

export type { components, operations, paths };

/** An error answer: RFC 9457 Problem Details with a stable machine `code` and the `request_id`. */
export type Problem = components["schemas"]["ProblemDetails"];

export type RelabClient = Client<paths>;

/** Where a bearer token comes from: the token, or a function returning the current one (called per request). */
export type AccessToken = string | (() => string | undefined | Promise<string | undefined>);

export interface RelabClientOptions extends Omit<ClientOptions, "baseUrl"> {
  /**
   * The deployment's origin, e.g. `https://api.relab.example` or `http://localhost:8787`. Paths
   * in the schema carry their `/v1` prefix already, so the base URL ends before it.
   */
  baseUrl: string;
  /** Sends `Authorization: Bearer <token>` on every request that does not set its own. */
  accessToken?: AccessToken;
}

/** A client for the deployment at `baseUrl`. */
export function createRelabClient({ baseUrl, accessToken, ...options }: RelabClientOptions): RelabClient {
  const origin = baseUrl.replace(/\/+$/, "");
  if (/\/v1$/.test(origin)) {
    throw new TypeError(`baseUrl ends in /v1 (${baseUrl}): pass the origin only; the paths carry /v1 themselves`);
  }
  const client = createClient<paths>({ ...options, baseUrl: origin });
  if (accessToken !== undefined) client.use(bearerToken(accessToken));
  return client;
}

/** Middleware that adds the bearer token to each request that has no `Authorization` header. */
export function bearerToken(token: AccessToken): Middleware {
  return {
    async onRequest({ request }) {
      if (request.headers.has("authorization")) return undefined;
      const value = typeof token === "function" ? await token() : token;
      if (value) request.headers.set("Authorization", `Bearer ${value}`);
      return request;
    },
  };
}

/** The `If-Match` value that names a record's `version` (a PATCH without it is 428, a stale one 412). */
export function ifMatch(version: number): string {
  return `"${version}"`;
}
