import type { SQL } from "drizzle-orm";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

export type Db = DrizzleD1Database & { $client: D1Database };

/** Number of D1 round trips made so far through one counting wrapper. */
export interface RoundTripCounter {
  readonly count: number;
}

interface MutableCounter {
  count: number;
}

/**
 * Wraps a D1 binding so that each network round trip to the database is counted: every
 * `first`/`run`/`all`/`raw` of a statement, every `exec`, and each `batch` (however many
 * statements it carries) counts one. In production D1 lives in one region while the Worker runs
 * at the edge, so this count is the number of network hops a request costs.
 */
export function countRoundTrips(d1: D1Database): { d1: D1Database; counter: RoundTripCounter } {
  const counter: MutableCounter = { count: 0 };
  return { d1: new CountingDatabase(d1, counter) as unknown as D1Database, counter };
}

/** A drizzle client over a counting wrapper of `d1`, and its counter (`counter`, or a new one). One per request. */
export function createDb(d1: D1Database, counter: RoundTripCounter = { count: 0 }): { db: Db; roundTrips: RoundTripCounter } {
  return { db: drizzle(new CountingDatabase(d1, counter as MutableCounter) as unknown as D1Database), roundTrips: counter };
}

class CountingStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    private readonly counter: MutableCounter,
  ) {}

  bind(...values: unknown[]): CountingStatement {
    return new CountingStatement(this.inner.bind(...values), this.counter);
  }

  first<T>(column?: string): Promise<T | null> {
    this.counter.count++;
    return column === undefined ? this.inner.first<T>() : this.inner.first<T>(column);
  }

  run<T>(): Promise<D1Result<T>> {
    this.counter.count++;
    return this.inner.run<T>();
  }

  all<T>(): Promise<D1Result<T>> {
    this.counter.count++;
    return this.inner.all<T>();
  }

  raw<T extends unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    this.counter.count++;
    // The overloads of raw() differ only in whether a header row comes first.
    return this.inner.raw<T>(options as { columnNames?: false });
  }
}

class CountingDatabase {
  constructor(
    private readonly inner: D1Database,
    private readonly counter: MutableCounter,
  ) {}

  prepare(query: string): CountingStatement {
    return new CountingStatement(this.inner.prepare(query), this.counter);
  }

  batch<T>(statements: (CountingStatement | D1PreparedStatement)[]): Promise<D1Result<T>[]> {
    this.counter.count++;
    return this.inner.batch<T>(
      statements.map((s) => (s instanceof CountingStatement ? s.inner : s)),
    );
  }

  exec(query: string): Promise<D1ExecResult> {
    this.counter.count++;
    return this.inner.exec(query);
  }

  withSession(): never {
    throw new Error("D1 sessions are not used through the counting wrapper");
  }

  dump(): never {
    throw new Error("D1 dump is not available through the counting wrapper");
  }
}

const dialect = new SQLiteAsyncDialect();

/**
 * Runs hand-written SQL statements (conditional writes, `RETURNING`) as one D1 batch: one round
 * trip, one transaction, executed in order. drizzle's own `batch` cannot carry raw `sql`
 * queries with parameters on D1, hence this. Returns the rows of each statement.
 */
export async function batchRows<T extends unknown[]>(db: Db, queries: { [K in keyof T]: SQL }): Promise<{ [K in keyof T]: T[K][] }> {
  const client = db.$client;
  const statements = queries.map((query) => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    return client.prepare(text).bind(...params);
  });
  const results = await client.batch(statements);
  return results.map((result) => result.results ?? []) as { [K in keyof T]: T[K][] };
}
