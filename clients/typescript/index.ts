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

export type QualityCheckCode = components["schemas"]["QualityCheckCode"];

/** One of your base products that fails a quality check, with what fails (docs/quality.md). */
export interface RecordThatNeedsWork {
  id: number;
  name: string;
  quality_score: number;
  /** The failing checks of the product itself, with the numbers they compared. */
  failing: { code: QualityCheckCode; detail: string }[];
  /** The records of its tree with the lowest scores (its components included). */
  lowest: { id: number; name: string; score: number }[];
}

/**
 * Your own base products that need work: every page of `GET /v1/products?owner=me` with
 * `quality_score[lt]` (default 1: any failing check) and, when given, `quality_fail[in]`, each
 * with its failing checks from `GET /v1/products/{id}/quality`; lowest score first. Needs a
 * client with an access token. One request per page and one per product found.
 */
export async function recordsThatNeedWork(
  api: RelabClient,
  options: { below?: number; failing?: readonly QualityCheckCode[] } = {},
): Promise<RecordThatNeedsWork[]> {
  const query = {
    owner: "me" as const,
    "quality_score[lt]": String(options.below ?? 1),
    ...(options.failing && options.failing.length > 0 ? { "quality_fail[in]": options.failing.join(",") } : {}),
    size: 100,
  };
  const found: RecordThatNeedsWork[] = [];
  for (let page = 1; ; page++) {
    const { data, error } = await api.GET("/v1/products", { params: { query: { ...query, page } } });
    if (error) throw new Error(`${error.code}: ${error.detail}`);
    for (const item of data.items) {
      const quality = await api.GET("/v1/products/{id}/quality", { params: { path: { id: item.id } } });
      if (quality.error) throw new Error(`${quality.error.code}: ${quality.error.detail}`);
      found.push({
        id: item.id,
        name: item.name,
        quality_score: quality.data.score,
        failing: quality.data.checks.filter((check) => check.status === "fail").map(({ code, detail }) => ({ code, detail })),
        lowest: quality.data.tree?.lowest ?? [],
      });
    }
    if (page >= data.pages) break;
  }
  return found.sort((a, b) => a.quality_score - b.quality_score || a.id - b.id);
}
