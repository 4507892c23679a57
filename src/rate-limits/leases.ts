import { LRUCache } from "lru-cache";

/** What a lease needs of a counter reading (the counter store's `CounterReading`). */
export interface LeasedReading {
  name: string;
  amount: number;
  windowSeconds: number;
  durable?: boolean;
  used: number;
  remaining: number;
  resetSeconds: number;
  windowStart: number;
  exhausted: boolean;
}

/** Units the store granted in one call: unit k (0-based) of the grant is unit `bases[i] + k + 1` of counter i's window. */
interface Grant {
  bases: number[];
  granted: number;
  /** The next unit of the grant to hand out. */
  next: number;
}

interface Lease {
  /** The counters as the store last reported them (names, amounts, windows). */
  counters: LeasedReading[] | null;
  /** When the earliest of the counters' windows ends (ms): the grants are void from then on. */
  endsAt: number;
  grants: Grant[];
  /** Units to ask for when the grants are spent. */
  size: number;
}

/**
 * Units of request-rate counters that this isolate took from the counter store ahead of use, per
 * subject and set of counters (docs/rate-limits.md "Units taken ahead"). A client that keeps coming
 * back to the same isolate is counted with one store call per grant rather than per request: the
 * first call asks for one unit, each further call for twice as many as the one before, up to
 * `cap`. Every unit handed out is one the store counted, in order, so a client never gets more
 * than its limit, and the `RateLimit` remaining a response reports is that unit's own place in the
 * window (exact when one isolate serves the client). Units left in a grant when the window ends are
 * lost; a client served by several isolates may therefore be refused up to `cap - 1` units early
 * per other isolate, and a window that ends with units left halves the next window's grants.
 */
export class LeaseBook {
  private readonly leases: LRUCache<string, Lease>;

  constructor(maxEntries = 10_000) {
    this.leases = new LRUCache({ max: maxEntries });
  }

  /** A unit from a live grant of `key`, as the readings of its counters; null when none is left. */
  take(key: string, now: number): LeasedReading[] | null {
    const lease = this.leases.get(key);
    if (!lease?.counters || lease.endsAt <= now) return null;
    const grant = lease.grants[0];
    if (!grant) return null;
    const unit = grant.next++;
    if (grant.next >= grant.granted) lease.grants.shift();
    return readingsAt(lease.counters, grant.bases, unit, now);
  }

  /** How many units the next store call for `key` should ask for (at least 1, at most `cap`). */
  units(key: string, now: number, cap: number): number {
    const lease = this.leases.get(key);
    if (!lease) return 1;
    if (lease.counters && lease.endsAt <= now) {
      const unused = lease.grants.reduce((sum, grant) => sum + grant.granted - grant.next, 0);
      lease.counters = null;
      lease.grants = [];
      if (unused > 0) lease.size = Math.max(1, Math.floor(lease.size / 2));
    }
    return Math.max(1, Math.min(cap, lease.size));
  }

  /**
   * Records a store answer that granted `granted` units (its readings count them all as used) and
   * returns the readings of the first unit, which the calling request takes; the rest are kept
   * for the next requests of `key`. `cap` bounds the next call's size.
   */
  add(key: string, counters: readonly LeasedReading[], granted: number, now: number, cap: number): LeasedReading[] {
    const bases = counters.map((counter) => counter.used - granted);
    const endsAt = Math.min(...counters.map((counter) => counter.windowStart + counter.windowSeconds * 1000));
    const own = readingsAt(counters, bases, 0, now);
    let lease = this.leases.get(key);
    if (!lease) {
      lease = { counters: null, endsAt: 0, grants: [], size: 1 };
      this.leases.set(key, lease);
    }
    const sameWindow =
      lease.counters !== null &&
      lease.counters.length === counters.length &&
      lease.counters.every((known, i) => known.name === counters[i]!.name && known.windowStart === counters[i]!.windowStart);
    if (!sameWindow) lease.grants = [];
    lease.counters = counters.map((counter) => ({ ...counter }));
    lease.endsAt = endsAt;
    if (granted > 1) {
      lease.grants.push({ bases, granted, next: 1 });
      // Answers of concurrent calls may arrive out of order: hand out the earliest units first.
      lease.grants.sort((a, b) => a.bases[0]! - b.bases[0]!);
    }
    lease.size = Math.min(cap, Math.max(lease.size, granted) * 2);
    return own;
  }

  /** Forgets every lease (their units stay counted in the store until their windows end). */
  clear(): void {
    this.leases.clear();
  }
}

/** The readings of unit `unit` of a grant: used up to that unit, the rest remaining. */
function readingsAt(counters: readonly LeasedReading[], bases: readonly number[], unit: number, now: number): LeasedReading[] {
  return counters.map((counter, i) => {
    const used = bases[i]! + unit + 1;
    const resetSeconds = Math.max(1, Math.ceil((counter.windowStart + counter.windowSeconds * 1000 - now) / 1000));
    return { ...counter, used, remaining: Math.max(0, counter.amount - used), resetSeconds, exhausted: false };
  });
}
