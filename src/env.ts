import type { Db, RoundTripCounter } from "./db/client";
import type { AppConfig } from "./config";
import type { Logger } from "./lib/logger";

/** Secrets are set with `wrangler secret put` (or `.dev.vars` locally), so `wrangler types` cannot see them. */
export interface Secrets {
  BOOTSTRAP_SUPERUSER_EMAIL?: string;
  BOOTSTRAP_SUPERUSER_PASSWORD?: string;
  EMAIL_PROVIDER_API_KEY?: string;
}

/** Every binding, variable and secret the Worker reads. */
export type AppBindings = Env & Secrets;

/** Per-request values set by the middleware in `app.ts`, read with `c.get(name)` (a map lookup; `c.var` copies every variable on each access). */
export interface AppVariables {
  requestId: string;
  log: Logger;
  clientIp: string | null;
  config: AppConfig;
  db: Db;
  roundTrips: RoundTripCounter;
}

export interface AppEnv {
  Bindings: AppBindings;
  Variables: AppVariables;
}
