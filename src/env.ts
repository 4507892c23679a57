import type { Db, RoundTripCounter } from "./db/client";
import type { AppConfig } from "./config";
import type { Logger } from "./lib/logger";
import type { EmailSender } from "./services/email";
import type { HeldKey } from "./services/idempotency";
import type { Limiter } from "./services/rate-limiter";
import type { SessionUser } from "./services/sessions";

/** How the signed-in caller presented its access token. */
export interface SessionInfo {
  transport: "bearer" | "cookie";
  sessionId: string;
}

/**
 * Every binding, variable and secret the Worker reads (`worker-configuration.d.ts`, generated
 * from wrangler.toml and .dev.vars.example). A secret typed `string` may still be unset in a
 * deployment; `loadConfig` is the only reader of raw values and treats unset as empty.
 */
export type AppBindings = Env;

/** Per-request values set by the middleware in `app.ts`, read with `c.get(name)` (a map lookup; `c.var` copies every variable on each access). */
export interface AppVariables {
  requestId: string;
  log: Logger;
  clientIp: string | null;
  config: AppConfig;
  db: Db;
  roundTrips: RoundTripCounter;
  email: EmailSender;
  /** The counter store (`RATE_LIMITER`) behind its time-out. */
  limiter: Limiter;
  /** Set by `authenticate`: the signed-in user, or null for an anonymous request. */
  user: SessionUser | null;
  session: SessionInfo | null;
  /** Set on auth flows, which fail closed: a token-store error becomes 503, never a pass. */
  authFlow: boolean;
  /** Set by `idempotent()` while the request holds its `Idempotency-Key`: a create commits it in its own batch. */
  idempotencyKey?: HeldKey;
}

export interface AppEnv {
  Bindings: AppBindings;
  Variables: AppVariables;
}
