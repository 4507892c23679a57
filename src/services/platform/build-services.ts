import type { AppConfig } from "../../config";
import { loadConfig } from "../../config";
import type { Clock, CoreHooks, DomainEvent, EmailSender, EventBus, Limiter, OutboundFetch, Services } from "../../container";
import { createDb, type Db, newRoundTripCounter, type RoundTripCounter, type SessionStart } from "../../db/client";
import { createLogger, type Logger } from "../../lib/logger";
import { safeFetch } from "../../lib/outbound";
import { enabledPlugins, type Plugin } from "../../plugin";
import { createLimiter } from "../../rate-limits/client";
import { createEmailSender } from "./email";

const SYSTEM_CLOCK: Clock = { now: () => Date.now() };

export interface BuildOptions {
  /** The request's or job's logger; a bare one otherwise. */
  log?: Logger;
  /** The execution context's `waitUntil`; without one (a test calling a handler directly), deferred work runs unwatched. */
  defer?: (work: Promise<unknown>) => void;
  /** The plugins installed in this Worker; the enabled ones take part in `hooks`. */
  plugins?: readonly Plugin[];
  /**
   * Where the D1 session starts (docs/storage.md "Read replicas"); the primary unless told
   * otherwise. A function is asked when the database client is first made.
   */
  dbSession?: SessionStart | (() => SessionStart);
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
  // Read now: a bad plugin switch throws its ConfigError here, for the request to answer it.
  const enabled = enabledPlugins(options.plugins ?? [], env);
  return new Container(new Shared(env, config, log, enabled, options), log);
}

/** The same container with another logger (one queue message's, say): everything else is shared. */
export function withLog(services: Services, log: Logger): Services {
  return services instanceof Container ? new Container(services.shared, log) : { ...services, log };
}

/** Counter-store calls `services` made so far, without making its counter store when it has none yet. */
export function limiterCalls(services: Services): number {
  return services instanceof Container ? (services.shared.limiter?.calls ?? 0) : services.limiter.calls;
}

/**
 * What a container and those `withLog` makes from it share. The database client, the email
 * sender and the counter store are made on first use: a request that needs none of them
 * (`/live`, a refused preflight) does not pay for them.
 */
class Shared {
  readonly roundTrips: RoundTripCounter = newRoundTripCounter();
  db: Db | undefined;
  email: EmailSender | undefined;
  limiter: Limiter | undefined;
  events: EventBus | undefined;
  hooks: CoreHooks | undefined;

  constructor(
    readonly env: Env,
    readonly config: AppConfig,
    /** The first container's logger: the email sender, events and hooks log through it. */
    readonly log: Logger,
    readonly enabled: readonly Plugin[],
    readonly options: BuildOptions,
  ) {}
}

// A class rather than an object literal with getters and closures: one is made per request, and
// a literal's accessors and closures cost several times more to make (bench/README.md, Issue 24).
class Container implements Services {
  readonly clock = SYSTEM_CLOCK;

  constructor(
    readonly shared: Shared,
    readonly log: Logger,
  ) {}

  get db(): Db {
    const shared = this.shared;
    if (shared.db === undefined) {
      const session = shared.options.dbSession;
      shared.db = createDb(shared.env.DB, typeof session === "function" ? session() : session, shared.roundTrips).db;
    }
    return shared.db;
  }

  get roundTrips(): RoundTripCounter {
    return this.shared.roundTrips;
  }

  get config(): AppConfig {
    return this.shared.config;
  }

  get bindings(): Env {
    return this.shared.env;
  }

  get email(): EmailSender {
    const shared = this.shared;
    return (shared.email ??= createEmailSender(shared.config, shared.env.KV, shared.log));
  }

  get limiter(): Limiter {
    const shared = this.shared;
    return (shared.limiter ??= createLimiter(shared.env.RATE_LIMITER, shared.config.rateLimitStoreTimeoutMs));
  }

  get events(): EventBus {
    const shared = this.shared;
    return (shared.events ??= {
      async publish(event: DomainEvent) {
        try {
          await shared.env.EVENTS_QUEUE.send(event);
        } catch (error) {
          shared.log.error("domain event could not be queued", { type: event.type, error });
        }
      },
    });
  }

  get hooks(): CoreHooks {
    const shared = this.shared;
    // The plugins get a container with the first logger, as they did when hooks were closures.
    return (shared.hooks ??= {
      async accountDeleting(userId) {
        const services = new Container(shared, shared.log);
        await Promise.all(
          shared.enabled.map(async (plugin) => {
            try {
              await plugin.accountDeleting?.(services, userId);
            } catch (error) {
              shared.log.warn("plugin did not finish before the account's deletion", { plugin: plugin.name, error });
            }
          }),
        );
      },
    });
  }

  outbound(...[target, init, options]: Parameters<OutboundFetch>): Promise<Response> {
    return safeFetch(this.shared.config.outbound, target, init, options);
  }

  defer(work: Promise<unknown>): void {
    const defer = this.shared.options.defer;
    if (defer) defer(work);
    else void work.catch((error: unknown) => this.shared.log.error("deferred work failed", { error }));
  }
}
