import { DurableObject } from "cloudflare:workers";
import type { AppBindings } from "../src/env";

/** One counter to take a unit from: its name, how many units a window holds, and the window's length. */
export interface CounterSpec {
  name: string;
  amount: number;
  windowSeconds: number;
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

export interface ConsumeResult {
  allowed: boolean;
  counters: CounterReading[];
}

interface CounterRow extends Record<string, SqlStorageValue> {
  window_start: number;
  used: number;
}

/**
 * Exact fixed-window counters for one subject (one client IP, one user, one account digest):
 * `RATE_LIMITER.idFromName(subject)` gives every subject its own object, so no object is hot for
 * more than one client. Each call runs to completion before the next starts, and the counting part
 * has no `await`, so concurrent requests can never both take the last unit. Rows live in the
 * object's SQLite storage (an eviction keeps the day-long budgets); an alarm deletes ended windows.
 */
export class RateLimiter extends DurableObject<AppBindings> {
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: AppBindings) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS counters (
         name TEXT PRIMARY KEY,
         window_start INTEGER NOT NULL,
         ends_at INTEGER NOT NULL,
         used INTEGER NOT NULL
       )`,
    );
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * Takes one unit from every counter, or from none: when any counter has no unit left in its
   * window, the call is refused and nothing is counted (a refused request does not extend a block).
   */
  async consume(specs: CounterSpec[]): Promise<ConsumeResult> {
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    // Each row is read before any is written: a name given twice would be counted twice.
    const unique = [...new Map(specs.map((spec) => [spec.name, spec])).values()];
    const states = unique.map((spec) => {
      const row = sql
        .exec<CounterRow>("SELECT window_start, used FROM counters WHERE name = ? AND ends_at > ?", spec.name, now)
        .toArray()[0];
      const windowStart = row?.window_start ?? now;
      const used = row?.used ?? 0;
      return { spec, windowStart, endsAt: windowStart + spec.windowSeconds * 1000, used, fresh: !row };
    });
    const allowed = states.every((state) => state.used < state.spec.amount);
    let earliestNewEnd = Infinity;
    if (allowed) {
      for (const state of states) {
        state.used += 1;
        sql.exec(
          `INSERT INTO counters (name, window_start, ends_at, used) VALUES (?, ?, ?, 1)
           ON CONFLICT (name) DO UPDATE SET
             window_start = excluded.window_start, ends_at = excluded.ends_at,
             used = CASE WHEN counters.window_start = excluded.window_start THEN counters.used + 1 ELSE 1 END`,
          state.spec.name,
          state.windowStart,
          state.endsAt,
        );
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
    return { allowed, counters };
  }

  /** Gives back one unit per counter, in the same window only: a failure budget refunds an attempt that turned out to succeed. */
  refund(units: { name: string; windowStart: number }[]): void {
    for (const unit of units) {
      this.ctx.storage.sql.exec(
        "UPDATE counters SET used = used - 1 WHERE name = ? AND window_start = ? AND used > 0",
        unit.name,
        unit.windowStart,
      );
    }
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM counters WHERE ends_at <= ?", now);
    const next = sql.exec<{ next: number | null }>("SELECT min(ends_at) AS next FROM counters").one().next;
    this.alarmAt = null;
    if (next !== null) await this.cleanUpBy(next);
  }

  // An alarm per new window would be a storage write per window; one pending alarm at the
  // earliest end is enough, since each alarm schedules the next.
  private async cleanUpBy(endsAt: number): Promise<void> {
    if (this.alarmAt !== null && this.alarmAt <= endsAt) return;
    this.alarmAt = endsAt;
    await this.ctx.storage.setAlarm(endsAt);
  }
}
