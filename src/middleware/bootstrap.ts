import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ensureBootstrapSuperuser } from "../services/accounts/bootstrap";
import { buildServices } from "../services/platform/build-services";

// One run per database binding per isolate; a failed run is forgotten so the next request retries.
let runs = new WeakMap<object, Promise<unknown>>();
// Bindings whose run succeeded: their requests go straight on, without waiting on the run again.
let done = new WeakSet<object>();

/**
 * Forgets every run of this isolate, as a new isolate would know none: for tests that share one
 * runtime between files and give each file an empty database (test/support/new-isolate.ts).
 */
export function forgetBootstrap(): void {
  runs = new WeakMap();
  done = new WeakSet();
}

/** Whether the bootstrap run for `database` (a D1 binding) succeeded in this isolate. */
export function bootstrapped(database: object): boolean {
  return done.has(database);
}

/**
 * Makes sure the configured bootstrap superuser exists before the request is answered. Its D1
 * queries go through their own client, so they are not charged to the request's round trips.
 * `bestEffort` is for the probes: when the database is down, `/live` must still answer and
 * `/health` must report the outage itself, so a failed run is logged and the request goes on.
 */
export function ensureBootstrap({ bestEffort = false } = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (done.has(c.env.DB)) return next();
    let run = runs.get(c.env.DB);
    if (!run) {
      // Its own container: the run outlives this request and is shared with those that arrive meanwhile.
      const database = c.env.DB;
      run = ensureBootstrapSuperuser(buildServices(c.env, { log: c.get("log") }));
      runs.set(database, run);
      run.then(
        () => done.add(database),
        () => runs.delete(database),
      );
    }
    try {
      await run;
    } catch (error) {
      if (!bestEffort) throw error;
      c.get("log").warn("bootstrap superuser check failed; retried on the next request", { error });
    }
    await next();
  });
}
