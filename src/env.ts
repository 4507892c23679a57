import type { RouteConfig, RouteHandler } from "@hono/zod-openapi";
import type { SessionUser } from "./auth/session-user";
import type { Services } from "./container";
import type { HeldKey } from "./lib/idempotency-key";
import type { Logger } from "./lib/logger";

/** How the signed-in caller presented its access token. */
export interface SessionInfo {
  transport: "bearer" | "cookie";
  sessionId: string;
}

/** Per-request values set by the middleware in `app.ts`, read with `c.get(name)` (a map lookup; `c.var` copies every variable on each access). */
export interface AppVariables {
  requestId: string;
  log: Logger;
  clientIp: string | null;
  /** The request's service container (src/container.ts), built by `requestServices`. */
  services: Services;
  /** Set by `authenticate`: the signed-in user, or null for an anonymous request. */
  user: SessionUser | null;
  session: SessionInfo | null;
  /** Set on auth flows, which fail closed: a token-store error becomes 503, never a pass. */
  authFlow: boolean;
  /** Set by `idempotent()` while the request holds its `Idempotency-Key`: a create commits it in its own batch. */
  idempotencyKey?: HeldKey;
}

/**
 * Hono's environment: the Worker's bindings (the global `Env` of `worker-configuration.d.ts`,
 * generated from wrangler.jsonc and .dev.vars.example) and the request's variables.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: AppVariables;
}

/** A typed handler of one route declaration (`createRoute(...)`) in this app's environment. */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
