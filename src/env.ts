import type { RouteConfig, RouteConfigToEnv, RouteHandler } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { SessionUser } from "./auth/session-user";
import type { AccessClaims } from "./auth/tokens";
import type { CarriedViewer } from "./auth/viewer";
import type { Services } from "./container";
import type { HeldKey } from "./lib/idempotency-key";
import type { Logger } from "./lib/logger";

/** How the signed-in caller presented its access token. */
export interface SessionInfo {
  transport: "bearer" | "cookie";
  sessionId: string;
}

/** The access token a request presents, verified (signature and expiry; not yet checked against D1), with how it came. */
export interface PresentedClaims {
  claims: AccessClaims;
  transport: SessionInfo["transport"];
}

/** Per-request values every route has, set by the middleware in `app.ts`, read with `c.get(name)` (a map lookup; `c.var` copies every variable on each access). */
export interface BaseVariables {
  requestId: string;
  log: Logger;
  clientIp: string | null;
  /** The request's service container (src/container.ts), built by `requestServices`. */
  services: Services;
  /** The presented token's verified claims once `presentedClaims` has read them (null: none, or not well signed). */
  presented?: PresentedClaims | null;
  /** Set on auth flows, which fail closed: a token-store error becomes 503, never a pass. */
  authFlow: boolean;
  /** Set by `idempotent()` while the request holds its `Idempotency-Key`: a create commits it in its own batch. */
  idempotencyKey?: HeldKey;
}

/**
 * The variables of the app's middleware and of the routes whose caller is known before the
 * handler runs (`authenticate`, `adminOnly`): `user` is the signed-in user, or null for an
 * anonymous request.
 */
export interface AppVariables extends BaseVariables {
  user: SessionUser | null;
  session: SessionInfo | null;
}

/**
 * The variables of a read whose token check travels in its first batch (`cachedRead`,
 * `authenticateCarried`): no `user`, so a handler that asks for the viewer before it is known does
 * not compile; `viewer` (`CarriedViewer`) gives the user together with a read.
 */
export interface CarriedVariables extends BaseVariables {
  viewer: CarriedViewer;
}

/**
 * Hono's environment: the Worker's bindings (the global `Env` of `worker-configuration.d.ts`,
 * generated from wrangler.jsonc and .dev.vars.example) and the request's variables.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}

/** Hono's environment on a route whose token check is carried (`CarriedVariables`). */
export interface CarriedEnv {
  Bindings: Env;
  Variables: CarriedVariables;
}

/** What every route's context has, however its caller is known: the environment of a router that serves carried reads (`createRouter<BaseEnv>()`). */
export interface BaseEnv {
  Bindings: Env;
  Variables: BaseVariables;
}

/**
 * The environment a route's handler sees, as its router (`E`) and its middleware make it: on a
 * router of `BaseEnv`, `user` only after `authenticate`, and `viewer` (no `user`) after a carried
 * check, so a handler that asks for the viewer before it is known does not compile.
 */
type HandlerEnv<R extends RouteConfig, E extends BaseEnv> = R["middleware"] extends MiddlewareHandler[] | MiddlewareHandler
  ? RouteConfigToEnv<R> & E
  : E;

/** A typed handler of one route declaration (`createRoute(...)`) on a router of environment `E`. */
export type AppRouteHandler<R extends RouteConfig, E extends BaseEnv = AppEnv> = RouteHandler<R, HandlerEnv<R, E>>;
