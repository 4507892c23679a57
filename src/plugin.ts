import type { DomainEvent, Services } from "./container";
import type { OpenApiTag } from "./lib/openapi";
import type { AppOpenAPI } from "./lib/router";
import type { SealedColumn } from "./services/operations/sealed-values";

/**
 * An optional part of the service that lives under `src/plugins/<name>/` and that the core never
 * imports: `src/app.ts` mounts its routes and `src/index.ts` wires its queue, schedule and Durable
 * Objects. What the core tells a plugin reaches it through three doors only: the domain events
 * (after a change committed, retried), one in-request hook (before an account's deletion), and the
 * scheduled run (reconciliation). docs/architecture.md describes the contract.
 */
export interface Plugin {
  /** Kebab-case, as in its path (`/v1/plugins/<name>/...`) and its folder. */
  readonly name: string;
  /**
   * Whether this deployment runs it (its own variable; throws `ConfigError` for a bad value). Off:
   * its routes are not mounted (they answer the ordinary 404 and leave the OpenAPI document), and
   * neither its hooks nor its event handlers nor its scheduled work run.
   */
  isEnabled(env: Env): boolean;
  /** Mounts its routers on the root app. */
  routes(app: AppOpenAPI): void;
  /** The OpenAPI tags its operations use, described (they join the document only while it is on). */
  readonly openApiTags?: readonly OpenApiTag[];
  /** See `CoreHooks.accountDeleting`. */
  accountDeleting?(services: Services, userId: number): Promise<void>;
  /** Handles one domain event; throwing retries the message (so it must be idempotent). */
  onEvent?(services: Services, event: DomainEvent): Promise<void>;
  /** Runs on the Worker's Cron Trigger: clean-up that an event missed, say. `at` is the scheduled time (epoch ms). */
  scheduled?(services: Services, at: number): Promise<void>;
  /**
   * The columns of its tables that hold values sealed with the data key, for the re-encryption
   * job of a key rotation (src/services/operations/sealed-values.ts). Moved whether or not the plugin is on:
   * its tables exist either way.
   */
  readonly sealedColumns?: readonly SealedColumn[];
}

/** The plugins of `installed` that this deployment runs. */
export function enabledPlugins(installed: readonly Plugin[], env: Env): Plugin[] {
  return installed.filter((plugin) => plugin.isEnabled(env));
}
