import { fillPlaceholders, type Placeholder, type Query, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

export type Db = DrizzleD1Database & { $client: D1Database };

/**
 * What one counting wrapper has cost D1 so far: round trips (`count`), and summed over its
 * statements the rows read and written and the database time, as D1 reports them in each
 * statement's `meta`. `unmetered` counts the statements D1 answers without `meta` (`raw()`, which
 * drizzle's query builder uses for selects, and `exec`): their rows are not in the sums, so a read
 * whose cost is asserted runs through `all`/`first`/`run`/`batch`.
 */
export interface RoundTripCounter {
  readonly count: number;
  /**
   * Statements run, each statement of a batch counted: D1 allows an invocation (a request, a queue
   * message) at most 1,000 queries on the paid plan, every statement of a batch counting as one
   * (`D1_QUERIES_PER_INVOCATION`).
   */
  readonly statements: number;
  readonly rowsRead: number;
  readonly rowsWritten: number;
  readonly durationMs: number;
  /** The longest single statement's database time: what held the database longest at once (D1 runs one query at a time). */
  readonly longestMs: number;
  readonly unmetered: number;
}

type MutableCounter = { -readonly [K in keyof RoundTripCounter]: RoundTripCounter[K] };

/**
 * D1's limit on the queries one invocation may run (Workers Paid; Free: 50), each statement of a
 * batch counting as one (developers.cloudflare.com/d1/platform/limits/). Local D1 does not enforce it.
 */
export const D1_QUERIES_PER_INVOCATION = 1_000;

/**
 * What work that runs in rounds (a deletion job's slices, a release build's units) lets one
 * invocation spend before it hands the rest to a new queue message: the limit less a margin for
 * the bookkeeping that follows the last round.
 */
export const QUERY_BUDGET = 800;

/** A counter's figures as a log line carries them (the access log line's names), for queue work that has no request line. */
export function costFields(counter: RoundTripCounter): Record<string, number> {
  const ms = (value: number) => Math.round(value * 100) / 100;
  return {
    d1_round_trips: counter.count,
    d1_statements: counter.statements,
    d1_rows_read: counter.rowsRead,
    d1_rows_written: counter.rowsWritten,
    d1_duration_ms: ms(counter.durationMs),
    d1_longest_ms: ms(counter.longestMs),
  };
}

/** A fresh counter: nothing spent yet. */
export function newRoundTripCounter(): RoundTripCounter {
  return { count: 0, statements: 0, rowsRead: 0, rowsWritten: 0, durationMs: 0, longestMs: 0, unmetered: 0 };
}

function addMeta(counter: MutableCounter, meta: Partial<D1Meta> | undefined): void {
  counter.statements++;
  if (!meta) {
    counter.unmetered++;
    return;
  }
  counter.rowsRead += meta.rows_read ?? 0;
  counter.rowsWritten += meta.rows_written ?? 0;
  counter.durationMs += meta.duration ?? 0;
  counter.longestMs = Math.max(counter.longestMs, meta.duration ?? 0);
}

/**
 * Wraps a D1 binding so that each network round trip to the database is counted: every
 * `first`/`run`/`all`/`raw` of a statement, every `exec`, and each `batch` (however many
 * statements it carries) counts one. In production D1 lives in one region while the Worker runs
 * at the edge, so this count is the number of network hops a request costs.
 */
export function countRoundTrips(d1: D1Database | D1DatabaseSession): { d1: D1Database; counter: RoundTripCounter } {
  const counter = newRoundTripCounter() as MutableCounter;
  return { d1: new CountingDatabase(d1, counter) as unknown as D1Database, counter };
}

/**
 * Where a D1 session starts (the Sessions API, docs/storage.md "Read replicas"): a bookmark a
 * client sent back (a state at least that recent), `first-unconstrained` (any replica), or
 * `first-primary`.
 */
export type SessionStart = D1SessionConstraint | D1SessionBookmark;

/**
 * A drizzle client over a counting wrapper of a D1 session that starts at `start`, and its
 * counter (`counter`, or a new one). One per request (or queue batch, Durable Object call). All its queries run in that one
 * session, so each read sees every write made before it through the same client.
 */
export function createDb(
  d1: D1Database,
  start: SessionStart = "first-primary",
  counter: RoundTripCounter = newRoundTripCounter(),
): { db: Db; roundTrips: RoundTripCounter } {
  const counted = new CountingDatabase(d1.withSession(start), counter as MutableCounter) as unknown as D1Database;
  return { db: drizzle(counted), roundTrips: counter };
}

/** The session's latest bookmark: the database state its queries have seen, or null before the first query. */
export function bookmarkOf(db: Db): string | null {
  const client = db.$client as unknown;
  return client instanceof CountingDatabase ? client.bookmark() : null;
}

/**
 * Has `queries` travel at the front of the next batch made through `db` (the request's next
 * round trip), and hands their rows to `settle` before that batch's caller sees its own results;
 * `settle` may throw, and the batch's caller then gets the error. This is how a request's token
 * check and a cache validator cost no round trip of their own (docs/architecture.md). A query
 * made outside a batch sends them first, on their own.
 */
export function carryInNextBatch(db: Db, queries: SQL[], settle: (rows: unknown[][]) => void): void {
  const client = clientOf(db);
  client.carry({
    statements: queries.map((query) => {
      const { sql: text, params } = dialect.sqlToQuery(query);
      return client.innerPrepare(text).bind(...params);
    }),
    settle: (results) => settle(results.map((result) => result.results ?? [])),
  });
}

/** Runs the carried queries now, in one round trip, if any wait (`carryInNextBatch`). */
export async function flushCarried(db: Db): Promise<void> {
  await clientOf(db).flush();
}

function clientOf(db: Db): CountingDatabase {
  const client = db.$client as unknown;
  if (!(client instanceof CountingDatabase)) throw new Error("carrying queries needs the counting client");
  return client;
}

interface Carried {
  statements: D1PreparedStatement[];
  settle(results: D1Result[]): void;
}

class CountingStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    private readonly database: CountingDatabase,
  ) {}

  bind(...values: unknown[]): CountingStatement {
    return new CountingStatement(this.inner.bind(...values), this.database);
  }

  // D1's own first() reads the whole result as all() does and drops its meta: all() costs the same and keeps it.
  async first<T>(column?: string): Promise<T | null> {
    const { results } = await this.all<Record<string, unknown>>();
    const row = results[0];
    if (row === undefined) return null;
    if (column === undefined) return row as T;
    if (!(column in row)) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`);
    return row[column] as T;
  }

  run<T>(): Promise<D1Result<T>> {
    return this.metered(() => this.inner.run<T>());
  }

  all<T>(): Promise<D1Result<T>> {
    return this.metered(() => this.inner.all<T>());
  }

  /** One round trip, after whatever was carried, with its cost added from the result's `meta`. */
  private async metered<R extends D1Result>(send: () => Promise<R>): Promise<R> {
    await this.database.flush();
    this.database.counter.count++;
    const result = await send();
    addMeta(this.database.counter, result.meta);
    return result;
  }

  async raw<T extends unknown[]>(options?: { columnNames?: boolean }): Promise<T[]> {
    await this.database.flush();
    this.database.counter.count++;
    // D1 answers raw() without meta (RoundTripCounter).
    this.database.counter.unmetered++;
    this.database.counter.statements++;
    // The overloads of raw() differ only in whether a header row comes first.
    return this.inner.raw<T>(options as { columnNames?: false });
  }
}

class CountingDatabase {
  private carried: Carried[] = [];

  constructor(
    private readonly inner: D1Database | D1DatabaseSession,
    readonly counter: MutableCounter,
  ) {}

  prepare(query: string): CountingStatement {
    return new CountingStatement(this.inner.prepare(query), this);
  }

  innerPrepare(query: string): D1PreparedStatement {
    return this.inner.prepare(query);
  }

  carry(carried: Carried): void {
    this.carried.push(carried);
  }

  async flush(): Promise<void> {
    if (this.carried.length > 0) await this.batch([]);
  }

  async batch<T>(statements: (CountingStatement | D1PreparedStatement)[]): Promise<D1Result<T>[]> {
    const carried = this.carried;
    this.carried = [];
    this.counter.count++;
    const results = await this.inner.batch<T>([
      ...carried.flatMap((entry) => entry.statements),
      ...statements.map((s) => (s instanceof CountingStatement ? s.inner : s)),
    ]);
    for (const result of results) addMeta(this.counter, result.meta);
    let offset = 0;
    for (const entry of carried) {
      entry.settle(results.slice(offset, offset + entry.statements.length) as D1Result[]);
      offset += entry.statements.length;
    }
    return results.slice(offset);
  }

  bookmark(): string | null {
    return "getBookmark" in this.inner ? this.inner.getBookmark() : null;
  }

  exec(query: string): Promise<D1ExecResult> {
    if (!("exec" in this.inner)) throw new Error("D1 exec is not available in a session");
    this.counter.count++;
    this.counter.unmetered++;
    this.counter.statements++;
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

/** A statement rendered to SQL text once (`renderedOnce`), with this call's parameters bound. */
export class RenderedSql implements Query {
  constructor(
    readonly sql: string,
    readonly params: unknown[],
  ) {}
}

/** Placeholders by name: `p.id` is `sql.placeholder("id")`. */
type Placeholders<V> = { readonly [K in keyof V & string]: Placeholder<K> };

/**
 * Statements of a fixed shape, built and rendered once per isolate with named placeholders, then
 * only bound on each call. drizzle builds and renders a statement on every call, and for the
 * query builder that costs: a product's detail read (six statements, four of them builder
 * selects) took about 0.5 ms of CPU to build and render (Node, measured) against 2 µs to bind the
 * rendered text, on a read that costs a few milliseconds of CPU in all. The statements are
 * declared as before (schema columns, `eq`, `sql`); only the text is kept. Run through `batchRows`.
 * A placeholder binds its value as given: drizzle skips a column's encoder for it (`eq(col, p.x)`
 * with a timestamp, boolean or JSON column would bind the raw value), so pass values as SQLite
 * stores them (ids, seconds, 0/1, JSON text).
 */
export function renderedOnce<V extends Record<string, unknown>>(
  build: (p: Placeholders<V>) => readonly SQLWrapper[],
): (values: V) => RenderedSql[] {
  let rendered: Query[] | undefined;
  return (values) => {
    rendered ??= build(new Proxy({}, { get: (_, name) => sql.placeholder(String(name)) }) as Placeholders<V>).map((query) =>
      dialect.sqlToQuery(query.getSQL()),
    );
    return rendered.map((query) => new RenderedSql(query.sql, fillPlaceholders(query.params, values)));
  };
}

/**
 * Runs statements, query-builder queries or hand-written SQL (conditional writes, `RETURNING`), as
 * one D1 batch: one round trip, one transaction, executed in order, every statement metered.
 * drizzle's own `batch` cannot carry raw `sql` queries with parameters on D1, hence this. Returns
 * the rows of each statement as SQLite stores them (no mapping by the schema: `Row` types).
 */
export async function batchRows<T extends unknown[]>(
  db: Db,
  queries: { [K in keyof T]: SQLWrapper | RenderedSql },
): Promise<{ [K in keyof T]: T[K][] }> {
  const client = db.$client;
  const statements = queries.map((query) => {
    const { sql: text, params } = query instanceof RenderedSql ? query : dialect.sqlToQuery(query.getSQL());
    return client.prepare(text).bind(...params);
  });
  const results = await client.batch(statements);
  return results.map((result) => result.results ?? []) as { [K in keyof T]: T[K][] };
}
