import { loadConfig } from "../config";
import type { Clock, DomainEvent, EmailSender, Limiter, Services } from "../container";
import { createDb, type Db, type RoundTripCounter, type SessionStart } from "../db/client";
import { createLogger, type Logger } from "../lib/logger";
import { safeFetch } from "../lib/outbound";
import { enabledPlugins, type Plugin } from "../plugin";
import { createEmailSender } from "./email";
import { createLimiter } from "./rate-limiter";

const SYSTEM_CLOCK: Clock = { now: () => Date.now() };

export interface BuildOptions {
  /** The request's or job's logger; a bare one otherwise. */
  log?: Logger;
  /** The execution context's `waitUntil`; without one (a test calling a handler directly), deferred work runs unwatched. */
  defer?: (work: Promise<unknown>) => void;
  /** The plugins installed in this Worker; the enabled ones take part in `hooks`. */
  plugins?: readonly Plugin[];
  /** Where the D1 session starts (docs/storage.md "Read replicas"); the primary unless told otherwise. */
  dbSession?: SessionStart;
}

/**
 * The service container (src/container.ts) over the Worker's bindings: the one place that builds
 * a database client, reads the configuration and makes the email sender, the counter store and
 * the allow-listed fetch. Called once per request (middleware/request-services.ts), per queue
 * batch, per scheduled run and per Durable Object call. Throws `ConfigError` for bad configuration.
 */
export function buildServices(env: Env, options: BuildOptions = {}): Services {
  const config = loadConfig(env);
  const log = options.log ?? createLogger({});
  // The database client, the email sender and the counter store are made on first use: a request
  // that needs none of them (`/live`, a refused preflight) does not pay for them.
  const roundTrips: RoundTripCounter = { count: 0 };
  // Read now: a bad plugin switch throws its ConfigError here, for the request to answer it.
  const enabled = enabledPlugins(options.plugins ?? [], env);
  let db: Db | undefined;
  let email: EmailSender | undefined;
  let limiter: Limiter | undefined;
  const defer =
    options.defer ?? ((work: Promise<unknown>) => void work.catch((error: unknown) => log.error("deferred work failed", { error })));
  const services: Services = {
    get db() {
      return (db ??= createDb(env.DB, options.dbSession, roundTrips).db);
    },
    roundTrips,
    config,
    clock: SYSTEM_CLOCK,
    log,
    get email() {
      return (email ??= createEmailSender(config, env.KV, log));
    },
    get limiter() {
      return (limiter ??= createLimiter(env.RATE_LIMITER, config.rateLimitStoreTimeoutMs));
    },
    outbound: (target, init, outboundOptions) => safeFetch(config.outbound, target, init, outboundOptions),
    bindings: env,
    defer,
    events: {
      async publish(event: DomainEvent) {
        try {
          await env.EVENTS_QUEUE.send(event);
        } catch (error) {
          log.error("domain event could not be queued", { type: event.type, error });
        }
      },
    },
    hooks: {
      async accountDeleting(userId) {
        await Promise.all(
          enabled.map(async (plugin) => {
            try {
              await plugin.accountDeleting?.(services, userId);
            } catch (error) {
              log.warn("plugin did not finish before the account's deletion", { plugin: plugin.name, error });
            }
          }),
        );
      },
    },
  };
  return services;
}

/** The same container with another logger (one queue message's, say): everything else is shared. */
export function withLog(services: Services, log: Logger): Services {
  return { ...services, log };
}
