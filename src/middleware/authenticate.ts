import type { SQL } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ACCESS_COOKIE, readCookie } from "../auth/cookies";
import { authenticationRequired } from "../auth/permissions";
import type { SessionUser } from "../auth/session-user";
import { readAccessToken } from "../auth/tokens";
import type { CarriedViewer } from "../auth/viewer";
import { carryInNextBatch, type Db, flushCarried } from "../db/client";
import type { AppEnv, BaseEnv, CarriedEnv, PresentedClaims } from "../env";
import { ApiError } from "../lib/problem";
import { accessCheckStatement, userForAccessToken, userFromAccessCheck } from "../services/sign-in/sessions";

function invalidToken(): ApiError {
  return new ApiError(401, {
    code: "INVALID_TOKEN",
    detail: "The access token is invalid, expired or revoked; refresh it or sign in again.",
    headers: { "WWW-Authenticate": 'Bearer realm="relab", error="invalid_token"' },
  });
}

/**
 * The access token a request presents: `Authorization: Bearer <token>` wins over the access
 * cookie. `token` is undefined when credentials were sent but are not a bearer token.
 */
export function presentedAccessToken(
  authorization: string | undefined,
  cookieHeader: string | undefined,
): { token: string | undefined; transport: "bearer" | "cookie" } | null {
  if (authorization !== undefined) {
    return { token: /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization)?.[1], transport: "bearer" };
  }
  const cookie = readCookie(cookieHeader, ACCESS_COOKIE);
  return cookie ? { token: cookie, transport: "cookie" } : null;
}

/**
 * The well-signed, unexpired token a request presents, with how it came; null when none. Read
 * once per request (the rate limiter, the session's start and the route's check all ask).
 */
export async function presentedClaims<E extends BaseEnv>(c: Context<E>): Promise<PresentedClaims | null> {
  const known = c.get("presented") as PresentedClaims | null | undefined;
  if (known !== undefined) return known;
  const presented = presentedAccessToken(c.req.header("authorization"), c.req.header("cookie"));
  let found: PresentedClaims | null = null;
  if (presented?.token) {
    const services = c.get("services");
    const claims = await readAccessToken(services.config.tokenSecrets, presented.token, services.clock.now() / 1000);
    found = claims ? { claims, transport: presented.transport } : null;
  }
  (c as unknown as Context<BaseEnv>).set("presented", found);
  return found;
}

/**
 * A token check that travels at the front of the request's next D1 batch (`carryInNextBatch`),
 * and the request's viewer as the route's handler gets it (`CarriedViewer`): known only once that
 * batch has run. The check fails closed as in `authenticate`: should its batch fail, the request
 * is a 503 (`authFlow` while it is pending), never an anonymous pass.
 */
class CarriedCheck implements CarriedViewer {
  readonly claimedId: number | null;
  #pending: boolean;
  #user: SessionUser | null = null;

  constructor(
    private readonly db: Db,
    claims: PresentedClaims | null,
  ) {
    this.claimedId = claims?.claims.userId ?? null;
    this.#pending = claims !== null;
  }

  /** What the check found (null: anonymous, or a token that no longer counts); undefined while it has not run. */
  get settled(): SessionUser | null | undefined {
    return this.#pending ? undefined : this.#user;
  }

  settle(user: SessionUser | null): void {
    this.#user = user;
    this.#pending = false;
  }

  async after<T>(read: Promise<T>): Promise<[T, SessionUser | null]> {
    const value = await read;
    return [value, await this.now()];
  }

  async now(): Promise<SessionUser | null> {
    if (this.#pending) await flushCarried(this.db);
    return this.#user;
  }
}

/**
 * Sends the check of a well-signed token (`presented`) with the request's next D1 batch, ahead of
 * `extra` statements, instead of in a round trip of its own; `then` gets the rows of `extra` once
 * that batch has run. Returns the viewer it settles.
 */
export function carryTokenCheck(
  c: Context<CarriedEnv>,
  presented: PresentedClaims | null,
  extra: SQL[] = [],
  then: (rows: unknown[][]) => void = () => {},
): CarriedCheck {
  const db = c.get("services").db;
  const check = new CarriedCheck(db, presented);
  const statements = presented ? [accessCheckStatement(presented.claims), ...extra] : extra;
  if (statements.length === 0) return check;
  const wasAuthFlow = c.get("authFlow");
  if (presented) c.set("authFlow", true);
  carryInNextBatch(db, statements, (rows) => {
    if (presented) {
      c.set("authFlow", wasAuthFlow);
      check.settle(userFromAccessCheck(rows[0] ?? [], presented.claims));
    }
    then(presented ? rows.slice(1) : rows);
  });
  return check;
}

/**
 * `authenticate("optional")` for a read that can start before the viewer is known: a presented
 * token's check travels in the handler's first D1 batch (one round trip for a signed-in read), and
 * the handler gets the viewer with its read (`c.get("viewer")`, `CarriedViewer`). A bad, expired
 * or revoked token leaves the request anonymous, as with `optional`.
 */
export const authenticateCarried = createMiddleware<CarriedEnv>(async (c, next) => {
  c.set("viewer", carryTokenCheck(c, await presentedClaims(c)));
  return next();
});

/**
 * Resolves the caller from `Authorization: Bearer <token>` (which wins) or the access cookie.
 * `required`: no or bad credentials answer 401. `optional`: they leave the request anonymous
 * (public reads that only vary with the viewer). Checking a token reads D1 once; the check fails
 * closed: a database error is a 503, never an anonymous pass.
 */
export function authenticate(mode: "required" | "optional") {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("user", null);
    c.set("session", null);
    const presented = await presentedClaims(c);
    if (presented) {
      // Only the token check itself fails closed here; what the route does next has its own rules.
      const wasAuthFlow = c.get("authFlow");
      c.set("authFlow", true);
      const user = await userForAccessToken(c.get("services"), presented.claims);
      c.set("authFlow", wasAuthFlow);
      if (user) {
        c.set("user", user);
        c.set("session", { transport: presented.transport, sessionId: presented.claims.sessionId });
        return next();
      }
    }
    if (mode === "optional") return next();
    // Credentials that are no well-signed token, or one no longer valid: 401 as invalid; none at all: 401 as missing.
    if (presentedAccessToken(c.req.header("authorization"), c.req.header("cookie")) === null) throw authenticationRequired();
    throw invalidToken();
  });
}
