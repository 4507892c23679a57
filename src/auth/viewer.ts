import type { SessionUser } from "./session-user";

/**
 * The viewer of a read whose token check travels in the read's first D1 batch, so that a
 * signed-in read costs one round trip like an anonymous one (docs/architecture.md "Carried
 * queries"). Who it is can be had only together with a read (`after`), or by running the check
 * on its own first (`now`, one round trip more): there is no way to ask before it is known.
 */
export interface CarriedViewer {
  /**
   * The account a presented, well-signed token names: who the viewer will be if the check finds
   * the token still counts (provisional: read as this account, then act on what `after` finds);
   * null when no such token was presented (the viewer is anonymous).
   */
  readonly claimedId: number | null;
  /**
   * `read`'s result with the viewer, once `read` has settled: its first batch carried the check
   * (a read that made none has it run on its own). A token found revoked reads as anonymous (null).
   */
  after<T>(read: Promise<T>): Promise<[T, SessionUser | null]>;
  /** The viewer before anything is read: the check (and what travels with it) in a round trip of its own unless it has run. */
  now(): Promise<SessionUser | null>;
}

/** A viewer known already (nothing in flight): what a caller that checked the token itself hands a service that takes a `CarriedViewer`. */
export function knownViewer(user: SessionUser | null): CarriedViewer {
  return {
    claimedId: user?.id ?? null,
    after: async (read) => [await read, user],
    now: async () => user,
  };
}
