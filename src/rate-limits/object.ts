import { DurableObject } from "cloudflare:workers";

/** One counter to take a unit from: its name, how many units a window holds, and the window's length. */
export interface CounterSpec {
  name: string;
  amount: number;
  windowSeconds: number;
  /**
   * Kept in the object's SQLite storage, so it survives an eviction or a deploy; otherwise kept
   * in memory (see the class comment).
   */
  durable?: boolean;
}

/** A counter after the call: units used in the current window and when that window ends. */
export interface CounterReading extends CounterSpec {
  used: number;
  remaining: number;
  /** Whole seconds until the window ends (at least 1). */
  resetSeconds: number;
  /** Identifies the window, so that a refund never lands in a later one. */
  windowStart: number;
  /** This counter had no unit left: the call was refused because of it. */
  exhausted: boolean;
}

/** The answer to `consume`: whether the units were taken, and every counter's state after the call. */
export interface ConsumeResult {
  allowed: boolean;
  /** Units taken from every counter (0 when refused; at most the `units` asked for). */
  granted?: number;
  counters: CounterReading[];
  /** Set when the object's storage failed: nothing was counted (the caller treats the store as unavailable). */
  failed?: string;
}

/**
 * The answer of a call whose storage failed (the caller treats the store as unavailable). A value
 * rather than a thrown error: an exception leaving an RPC method is also reported by the runtime
 * as uncaught, once per failed call, on top of the Worker's own log line.
 */
export interface StoreFailure {
  failed: string;
}

function storeFailure(error: unknown): StoreFailure & ConsumeResult {
  return { allowed: false, counters: [], failed: error instanceof Error ? error.message : String(error) };
}

interface CounterRow extends Record<string, SqlStorageValue> {
  window_start: number;
  used: number;
}

interface Window {
  windowStart: number;
  endsAt: number;
  used: number;
}

/**
 * Exact fixed-window counters for one subject (one client IP, one user, one account digest):
 * `RATE_LIMITER.idFromName(subject)` gives every subject its own object, so no object is hot for
 * more than one client. Each call runs to completion before the next starts, and the counting part
 * has no `await`, so concurrent requests can never both take the last unit.
 *
 * Durable counters (the guards and windows longer than a minute) live in SQLite storage, with one
 * alarm at the earliest window end deleting ended rows. Minute counters of request rates live in
 * memory: an idle object is only evicted after longer than such a window, so a count is lost only
 * when the object restarts (a deploy, a runtime update, a move), which lets a client a little over
 * its minute once; an object that never holds a durable counter never touches storage, which
 * keeps the first request of each new client cheap.
 */
export class RateLimiter extends DurableObject<Env> {
  private readonly memory = new Map<string, Window>();
  private tableReady = false;
  /** The pending alarm; undefined until read from storage. */
  private alarmAt: number | null | undefined = undefined;

  /**
   * Takes `units` units (default 1) from every counter, or as many as the fullest counter has
   * left, or none: when any counter has no unit left in its window, the call is refused and
   * nothing is counted (a refused request does not extend a block). More than one unit is a
   * grant an isolate hands out to its next requests (src/rate-limits/leases.ts).
   */
  async consume(specs: CounterSpec[], units = 1): Promise<ConsumeResult> {
    try {
      return await this.take(specs, units);
    } catch (error) {
      return storeFailure(error);
    }
  }

  private async take(specs: CounterSpec[], units: number): Promise<ConsumeResult> {
    const now = Date.now();
    for (const [name, window] of this.memory) if (window.endsAt <= now) this.memory.delete(name);
    // Each counter is read before any is written, so a name given twice is taken once.
    const unique = [...new Map(specs.map((spec) => [spec.name, spec])).values()];
    const states = unique.map((spec) => {
      const current = spec.durable ? this.readDurable(spec.name, now) : this.memory.get(spec.name);
      const windowStart = current?.windowStart ?? now;
      return { spec, windowStart, endsAt: windowStart + spec.windowSeconds * 1000, used: current?.used ?? 0, fresh: !current };
    });
    const asked = Number.isSafeInteger(units) && units > 1 ? units : 1;
    const granted = Math.min(asked, ...states.map((state) => state.spec.amount - state.used));
    const allowed = granted >= 1;
    let earliestNewEnd = Infinity;
    if (allowed) {
      for (const state of states) {
        state.used += granted;
        const window = { windowStart: state.windowStart, endsAt: state.endsAt, used: state.used };
        if (!state.spec.durable) {
          this.memory.set(state.spec.name, window);
          continue;
        }
        this.writeDurable(state.spec.name, window);
        if (state.fresh) earliestNewEnd = Math.min(earliestNewEnd, state.endsAt);
      }
    }
    const counters = states.map(({ spec, windowStart, endsAt, used }) => ({
      ...spec,
      used,
      remaining: Math.max(0, spec.amount - used),
      resetSeconds: Math.max(1, Math.ceil((endsAt - now) / 1000)),
      windowStart,
      exhausted: !allowed && used >= spec.amount,
    }));
    if (earliestNewEnd !== Infinity) await this.cleanUpBy(earliestNewEnd);
    return { allowed, granted: allowed ? granted : 0, counters };
  }

  /**
   * Gives back one unit per counter, in the same window only: a failure budget refunds an attempt
   * that turned out to succeed, and a request refused by another subject's counter its unit here.
   */
  refund(units: { name: string; windowStart: number; durable?: boolean }[]): StoreFailure | null {
    try {
      this.giveBack(units);
      return null;
    } catch (error) {
      return { failed: storeFailure(error).failed };
    }
  }

  private giveBack(units: { name: string; windowStart: number; durable?: boolean }[]): void {
    for (const unit of units) {
      if (!unit.durable) {
        const window = this.memory.get(unit.name);
        if (window && window.windowStart === unit.windowStart && window.used > 0) window.used -= 1;
        continue;
      }
      this.ensureTable();
      this.ctx.storage.sql.exec(
        "UPDATE counters SET used = used - 1 WHERE name = ? AND window_start = ? AND used > 0",
        unit.name,
        unit.windowStart,
      );
    }
  }

  override async alarm(): Promise<void> {
    this.ensureTable();
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM counters WHERE ends_at <= ?", now);
    const next = sql.exec<{ next: number | null }>("SELECT min(ends_at) AS next FROM counters").one().next;
    this.alarmAt = null;
    if (next !== null) await this.cleanUpBy(next);
  }

  private ensureTable(): void {
    if (this.tableReady) return;
    this.ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS counters (
         name TEXT PRIMARY KEY,
         window_start INTEGER NOT NULL,
         ends_at INTEGER NOT NULL,
         used INTEGER NOT NULL
       )`,
    );
    this.tableReady = true;
  }

  private readDurable(name: string, now: number): Window | undefined {
    this.ensureTable();
    const row = this.ctx.storage.sql
      .exec<CounterRow & { ends_at: number }>("SELECT window_start, ends_at, used FROM counters WHERE name = ? AND ends_at > ?", name, now)
      .toArray()[0];
    return row ? { windowStart: row.window_start, endsAt: row.ends_at, used: row.used } : undefined;
  }

  private writeDurable(name: string, window: Window): void {
    this.ctx.storage.sql.exec(
      `INSERT INTO counters (name, window_start, ends_at, used) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET window_start = excluded.window_start, ends_at = excluded.ends_at, used = excluded.used`,
      name,
      window.windowStart,
      window.endsAt,
      window.used,
    );
  }

  // An alarm per new window would be a storage write per window; one pending alarm at the
  // earliest end is enough, since each alarm schedules the next.
  private async cleanUpBy(endsAt: number): Promise<void> {
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt !== null && this.alarmAt <= endsAt) return;
    this.alarmAt = endsAt;
    await this.ctx.storage.setAlarm(endsAt);
  }
}
