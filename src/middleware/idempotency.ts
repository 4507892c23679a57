import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Services } from "../container";
import type { AppEnv } from "../env";
import type { HeldKey } from "../lib/idempotency-key";
import { ApiError } from "../lib/problem";
import {
  type ClaimResult,
  claimKey,
  releaseKey,
  requestInProgress,
  type StoredResponse,
  sha256Hex,
  storeResponse,
} from "../services/platform/idempotency";
import { requireUser } from "./guards";

/** The request header that names a create request for safe retries. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/** Set on a response that is the stored answer to an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed";

/** decisions.md: 1..128 visible ASCII characters (0x21-0x7E), sent unquoted and taken as is. */
const KEY_PATTERN = /^[!-~]{1,128}$/;

/** Response headers a replay repeats; the rest (request id, security headers) belong to the new answer. */
const REPLAYED_HEADERS = ["Content-Type", "Location", "ETag"] as const;

const KEY_DESCRIPTION =
  "Makes the create safe to retry: 1 to 128 visible ASCII characters (no spaces), sent unquoted, " +
  "for example a UUID. A key belongs to the user, the method and the path (the parent id included): " +
  "the same key on another path is another key. A retry with the same key, path and body within one hour " +
  `returns the first response again (with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`) instead of creating a duplicate, ` +
  "also when the first request was cut off after the record was made. The same key and path with another " +
  "body (or query string) is refused with 422; a retry while the first request still runs gets 409 with `Retry-After`.";

/**
 * The `Idempotency-Key` header in OpenAPI terms, for `request.headers` of a create route. The
 * middleware checks the key before this validator runs; the schema documents it and keeps the two
 * in agreement.
 */
export const IdempotencyKeyHeaderSchema = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .regex(KEY_PATTERN, "Must be 1 to 128 visible ASCII characters.")
    .optional()
    .openapi({ param: { description: KEY_DESCRIPTION }, example: "5f0c9a7e-8d1b-4f43-9a2c-7b1e0d6f3a21" }),
});

function malformedKey(): ApiError {
  return new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request did not pass validation.",
    errors: [
      {
        pointer: `#/header/${IDEMPOTENCY_KEY_HEADER}`,
        detail: "Must be 1 to 128 visible ASCII characters (no spaces or control characters), sent unquoted.",
      },
    ],
  });
}

function keyReused(): ApiError {
  return new ApiError(422, {
    code: "IDEMPOTENCY_KEY_REUSED",
    detail: "This Idempotency-Key was already used on this path with another body or query string; send a new key for a new request.",
  });
}

function recordGone(): ApiError {
  return new ApiError(410, {
    code: "IDEMPOTENCY_RECORD_GONE",
    detail: "The first request with this Idempotency-Key created its record, which has since been deleted.",
  });
}

function storeUnavailable(): ApiError {
  return new ApiError(503, {
    code: "IDEMPOTENCY_STORE_UNAVAILABLE",
    detail: "Requests with an Idempotency-Key cannot be processed right now; retry shortly with the same key.",
    headers: { "Retry-After": "5" },
  });
}

const nowSeconds = ({ clock }: Pick<Services, "clock">) => Math.floor(clock.now() / 1000);

/**
 * Runs the route for a held key, then keeps its answer: a 2xx response is stored for replay,
 * anything else (an error response, or an exception) gives the key up so that the client may
 * retry with it, unless the route's create committed (then the key stays, and a retry answers from
 * the record). The store and release happen before the answer leaves, so a retry sent right after
 * it sees the outcome. Their failures are logged, not raised: the request has run.
 */
async function runClaimed(c: Context<AppEnv>, held: HeldKey, next: () => Promise<void>): Promise<void> {
  const services = c.get("services");
  const log = services.log;
  const release = async () => {
    try {
      if (!(await releaseKey(services, held))) log.warn("idempotency key not released: committed, or taken over");
    } catch (error) {
      // The marker stays until its lease ends; retries meanwhile get 409.
      log.error("idempotency key release failed", { error });
    }
  };

  c.set("idempotencyKey", held);
  try {
    await next();
  } catch (error) {
    await release();
    throw error;
  }

  const response = c.res;
  if (response.status < 200 || response.status > 299) {
    await release();
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const stored: StoredResponse = { status: response.status, body: await response.clone().text(), headers };
  try {
    if (!(await storeResponse(services, held, stored, nowSeconds(services)))) {
      log.warn("idempotency marker was taken over before the response was stored");
    }
  } catch (error) {
    // The client gets its answer. The create's own batch marked the key committed, so a retry
    // answers from the record; a route that does not commit in its batch leaves the marker in
    // flight until its lease ends (retries get 409) rather than released for a duplicate.
    log.error("idempotent response could not be stored", { status: response.status, error });
  }
}

/** How a route answers again for a create that committed but whose response was not stored. */
export interface IdempotencyOptions {
  /**
   * Builds the route's answer for the record `resourceId` as it is now, as the route would have
   * answered its create; null when the record no longer exists. Routes whose create batch
   * includes `commitStatements` need it.
   */
  recover?: (c: Context<AppEnv>, resourceId: number) => Promise<Response | null>;
}

function replayed(response: Response): Response {
  response.headers.set(IDEMPOTENT_REPLAYED_HEADER, "true");
  return response;
}

/**
 * Idempotent creates (docs/idempotency.md). Put it after `authenticate("required")` in a
 * route's `middleware` list. Without an `Idempotency-Key` header it does nothing. With one, the
 * key is scoped to the user, the method and the path; the request under it is identified by its
 * query string and the SHA-256 of its raw body. The first such request runs (holding the key as
 * `c.get("idempotencyKey")`, for its create batch's `commitStatements`) and its 2xx response is
 * stored for an hour; a retry gets that response back with `Idempotent-Replayed: true`, or, when
 * the first request died between its commit and the store, the route's `recover` answer; a retry
 * while the first still runs gets 409; another query string or body under the key 422; a
 * malformed key 422. If the store cannot be reached the request is refused with 503 (fail
 * closed): running it unguarded could create the duplicate the client sent the key to prevent.
 *
 * Costs one D1 round trip to claim the key (the only one for a replay or a refusal) and one to
 * store the response or release the key; the commit rides in the create's own batch.
 */
export function idempotent(options: IdempotencyOptions = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header(IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) return next();
    const user = requireUser(c);
    if (!KEY_PATTERN.test(key)) throw malformedKey();

    const url = new URL(c.req.url);
    // Hono caches the body it read here, so the route's validator reads the same bytes again.
    const bodyHash = await sha256Hex(await c.req.arrayBuffer());
    const scope = `${c.req.method} ${url.pathname}`;
    const input = { userId: user.id, key, scope, target: `${scope}${url.search}`, bodyHash, now: nowSeconds(c.get("services")) };

    let result: ClaimResult;
    try {
      result = await claimKey(c.get("services"), input);
    } catch (error) {
      c.get("log").error("idempotency store unavailable", { error });
      throw storeUnavailable();
    }

    switch (result.kind) {
      case "claimed":
        return runClaimed(c, result.held, next);
      case "replay":
        // A null-body status (204) cannot carry even an empty string.
        return replayed(new Response(result.body === "" ? null : result.body, { status: result.status, headers: result.headers }));
      case "committed": {
        if (!options.recover) {
          // Only a route that commits in its batch marks a key committed, and such a route recovers.
          c.get("log").error("idempotency key committed on a route without recovery");
          throw requestInProgress();
        }
        const recovered = await options.recover(c, result.resourceId);
        if (!recovered) throw recordGone();
        return replayed(recovered);
      }
      case "in-progress":
        throw requestInProgress();
      case "mismatch":
        throw keyReused();
    }
  });
}
