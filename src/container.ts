import type { AppConfig } from "./config";
import type { Db, RoundTripCounter } from "./db/client";
import type { Logger } from "./lib/logger";
import type { OutboundOptions } from "./lib/outbound";
import type { CounterReading } from "./rate-limits/object";
import type { LimitName } from "./rate-limits/policy";

// The service container: what every service, handler, queue job and Durable Object call works
// with. It is built in one place (src/services/platform/build-services.ts) from the Worker's bindings, once
// per request, per queue batch and per Durable Object call. This file holds only the contract
// (and the ports its members implement), so that anything may import it without importing a service.

/** The time as the services see it: epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** One email the service sends. */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** The one interface through which the service sends email (development outbox or provider). */
export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}

export interface LimitDecision {
  allowed: boolean;
  counters: CounterReading[];
  /** Answered from this isolate's memory of spent counters, without a store call. */
  remembered?: boolean;
}

/** The counter store of one request: `RATE_LIMITER` behind a time-out and an isolate-local memory of blocks. */
export interface Limiter {
  /**
   * Takes one unit from each named counter of `subject`, or none if one is spent. Throws
   * `LimiterUnavailable`. `remember: false` keeps a refusal out of the isolate's memory (for
   * counters a refund may free early).
   */
  consume(subject: string, names: readonly LimitName[], options?: { remember?: boolean }): Promise<LimitDecision>;
  /** The refusal this isolate remembers for these counters, if any: no store call. */
  remembered(subject: string, names: readonly LimitName[]): LimitDecision | null;
  /** Gives the units of a decision back (a failure budget whose attempt succeeded). Throws `LimiterUnavailable`. */
  refund(subject: string, counters: readonly CounterReading[]): Promise<void>;
  /** Counter-store calls made so far (each one a network hop in production), for `Server-Timing`. */
  readonly calls: number;
}

/** The only way out to the network: `fetch` through the configured allow-list, without redirects, with a time-out (src/lib/outbound.ts). */
export type OutboundFetch = (target: string | URL, init?: RequestInit, options?: OutboundOptions) => Promise<Response>;

/**
 * What the core tells whoever listens (the plugins) after a change has committed, through the
 * `EVENTS_QUEUE`: delivered at least once, retried while a listener fails. Listeners clean up
 * what they keep about the records named; ids are never reused (products draw theirs from id
 * blocks, users are AUTOINCREMENT), so a late or repeated event can only find less to do.
 */
export type DomainEvent =
  /** Records (base products or components) were deleted, each with every component under it. */
  | { type: "records.deleted"; ids: number[] }
  /** An account was deleted (its products anonymised or deleted with it). */
  | { type: "account.deleted"; userId: number };

export interface EventBus {
  /** Queues the event. Never throws: a failed send is logged, and the listeners' scheduled reconciliation catches up. */
  publish(event: DomainEvent): Promise<void>;
}

/** What the core asks of the enabled plugins while it works (src/plugin.ts has the whole contract). */
export interface CoreHooks {
  /**
   * Awaited before an account's deletion batch, while the account and its links still exist: a
   * plugin finishes there what needs them (the camera plugin ends the account's live streams
   * and saves them as videos). Best effort: a failure is logged and the deletion goes on.
   */
  accountDeleting(userId: number): Promise<void>;
}

/**
 * The Worker's bindings (R2, KV, queues, Durable Objects) as wrangler.jsonc declares them. D1 and
 * the counter store are reached through `db` and `limiter`; variables and secrets are read through
 * `config` (a plugin's own settings through its own parser).
 */
export type Bindings = Env;

export interface Services {
  /** The round-trip-counting drizzle client over D1 (src/db/client.ts). */
  db: Db;
  /** D1 round trips made so far through `db`, for `Server-Timing` and the access log. */
  roundTrips: RoundTripCounter;
  config: AppConfig;
  clock: Clock;
  /** The request's (or job's) logger, carrying its request id or message id. */
  log: Logger;
  email: EmailSender;
  limiter: Limiter;
  outbound: OutboundFetch;
  bindings: Bindings;
  /** Runs work after the response is sent (the execution context's `waitUntil`). */
  defer(work: Promise<unknown>): void;
  events: EventBus;
  hooks: CoreHooks;
}
