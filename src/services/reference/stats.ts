import { asc, desc, eq, gt, type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { categories, productTypeCategories, productTypeCounts, qualityCounts } from "../../db/schema";
import { ApiError } from "../../lib/problem";
import { QUALITY_CHECK_CODES, type QualityCheckCode, type QualityStatus } from "../../lib/record-quality";
import { isoSeconds } from "../../lib/time";

/**
 * Public statistics (decisions.md, Reference data and statistics; docs/reference-data.md). Every
 * answer is one SQL statement, so it costs one D1 round trip; the Worker only renames the few
 * rows. They read the counters that triggers keep in every write's transaction (migration 0024,
 * docs/storage.md "Counters"): the totals one row each, the series one row per day with data in
 * the range, the categories one row per product type and link; never the products themselves.
 * Images count those that passed the malware scan (the ones readers can see).
 */

export const STATS_GRANULARITIES = ["day", "week", "month", "year"] as const;
export type StatsGranularity = (typeof STATS_GRANULARITIES)[number];

export const STATS_SCOPES = ["products", "components", "all"] as const;
export type StatsScope = (typeof STATS_SCOPES)[number];

export const STATS_LIMITS = {
  /** Periods one series may hold: 1,000 days is under three years of daily points. */
  maxPeriods: 1000,
  /** Categories listed by default, and at most. */
  categoriesDefault: 10,
  categoriesMax: 100,
  /** Earliest `start`/`end` accepted: `created_at` is unix seconds. */
  earliestDate: "1970-01-01",
} as const;

export interface StatsTotals {
  generated_at: string;
  totals: { teardowns: number; parts: number; mass_kg: number; images: number; users: number };
}

/** Counts over the whole dataset: base products, components, their mass, images, active accounts. */
export async function statsTotals(svc: Pick<Services, "db">, now: Date): Promise<StatsTotals> {
  // The counters: `active_users` leaves out the system account (holder of deleted accounts' products).
  const total = (name: string, column = "count") => sql.raw(`coalesce((SELECT ${column} FROM catalogue_totals WHERE name = '${name}'), 0)`);
  // Raw: one row of scalar sub-selects over the counters, with no table to select from.
  const [row] = await svc.db.all<StatsTotals["totals"]>(sql`
    SELECT ${total("base_products")} AS teardowns, ${total("components")} AS parts,
      round(${total("base_products", "mass_g")} / 1000.0, 3) AS mass_kg,
      ${total("clean_images")} AS images, ${total("active_users")} AS users`);
  return { generated_at: isoSeconds(now), totals: row! };
}

export interface SeriesRange {
  granularity: StatsGranularity;
  start: string;
  end: string;
}

export interface SeriesPoint {
  period: string;
  teardowns: number;
  parts: number;
  mass_kg: number;
  images: number;
  users_new: number;
}

export interface StatsSeries extends SeriesRange {
  generated_at: string;
  series: SeriesPoint[];
}

const DAY_MS = 86_400_000;
const dayMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** How far before `end` a missing `start` lies. */
function defaultStart(granularity: StatsGranularity, end: string): string {
  if (granularity === "day") return isoDate(dayMs(end) - 30 * DAY_MS);
  if (granularity === "week") return isoDate(dayMs(end) - 90 * DAY_MS);
  const date = new Date(dayMs(end));
  date.setUTCFullYear(date.getUTCFullYear() - 1);
  return isoDate(date.getTime());
}

// The Monday that starts the ISO week of `date` (getUTCDay: 0 is Sunday).
const mondayMs = (date: string): number => dayMs(date) - ((new Date(dayMs(date)).getUTCDay() + 6) % 7) * DAY_MS;

/** Periods between two dates, both ends included; the same periods the SQL below generates, counted up front to refuse huge ranges. */
function periodCount(granularity: StatsGranularity, start: string, end: string): number {
  const months = (date: string) => Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1;
  switch (granularity) {
    case "day":
      return (dayMs(end) - dayMs(start)) / DAY_MS + 1;
    case "week":
      return (mondayMs(end) - mondayMs(start)) / (7 * DAY_MS) + 1;
    case "month":
      return months(end) - months(start) + 1;
    case "year":
      return Number(end.slice(0, 4)) - Number(start.slice(0, 4)) + 1;
  }
}

function rangeError(detail: string): ApiError {
  return new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request did not pass validation.",
    errors: [{ pointer: "#/query/start", detail }],
  });
}

/**
 * The series range with its defaults filled in: `end` today (UTC), `start` 30 days before `end`
 * for days, 90 for weeks, a year for months and years. 422 when `start` is after `end` or the
 * range holds more than `STATS_LIMITS.maxPeriods` periods.
 */
export function resolveSeriesRange(
  query: { granularity: StatsGranularity; start?: string | undefined; end?: string | undefined },
  now: Date,
): SeriesRange {
  const { granularity } = query;
  const end = query.end ?? isoDate(now.getTime());
  const start = query.start ?? defaultStart(granularity, end);
  if (start > end) throw rangeError(`The start (${start}) is after the end (${end}).`);
  const periods = periodCount(granularity, start, end);
  if (periods > STATS_LIMITS.maxPeriods) {
    throw rangeError(
      `The range holds ${periods} periods of a ${granularity}; at most ${STATS_LIMITS.maxPeriods} are allowed. Narrow it or choose a longer granularity.`,
    );
  }
  return { granularity, start, end };
}

/**
 * SQLite date modifiers per granularity: `floor` takes a date to the first day of its period (a
 * week starts on Monday: back six days, then forward to the next Monday), `step` moves to the
 * next period, `label` prints a period. Bound as parameters, never spliced into the text.
 */
const PERIODS: Record<StatsGranularity, { floor: string[]; step: string; label: string }> = {
  day: { floor: [], step: "+1 day", label: "%Y-%m-%d" },
  week: { floor: ["-6 days", "weekday 1"], step: "+7 days", label: "%Y-%m-%d" },
  month: { floor: ["start of month"], step: "+1 month", label: "%Y-%m" },
  year: { floor: ["start of year"], step: "+1 year", label: "%Y" },
};

/** `date(<time>, <modifiers...>, <floor modifiers...>)`: the first day of the period of `time`. */
function periodOf(granularity: StatsGranularity, ...time: SQL[]): SQL {
  const modifiers = PERIODS[granularity].floor.map((modifier) => sql`${modifier}`);
  return sql`date(${sql.join([...time, ...modifiers], sql`, `)})`;
}

/**
 * Every period from the one holding `start` to the one holding `end`, zero-filled, in one
 * statement: a recursive CTE generates the periods and the records and accounts created inside
 * [start 00:00Z, end + 1 day 00:00Z) are grouped by period and joined on. So the first and last
 * periods count only the days inside the range, and the series adds up to the range's totals.
 */
export async function statsSeries(svc: Pick<Services, "db">, range: SeriesRange, now: Date): Promise<StatsSeries> {
  const { granularity } = range;
  const from = dayMs(range.start) / 1000;
  const until = dayMs(range.end) / 1000 + 86_400;
  // Days as `daily_counts` keys them (created_at / 86400): the range's ends are whole days.
  const dayPeriod = periodOf(granularity, sql`day * 86400`, sql`${"unixepoch"}`);
  // Raw: a recursive CTE generates the periods.
  const rows = await svc.db.all<SeriesPoint>(sql`
    WITH RECURSIVE
      bounds(first_period, last_period) AS (SELECT ${periodOf(granularity, sql`${range.start}`)}, ${periodOf(granularity, sql`${range.end}`)}),
      periods(period) AS (
        SELECT first_period FROM bounds
        UNION ALL
        SELECT date(period, ${PERIODS[granularity].step}) FROM periods, bounds WHERE period < last_period
      ),
      day_counts AS (
        SELECT ${dayPeriod} AS period, sum(teardowns) AS teardowns, sum(parts) AS parts, total(mass_g) AS mass_g,
          sum(images) AS images, sum(users_new) AS users_new
        FROM daily_counts WHERE day >= ${from / 86_400} AND day < ${until / 86_400}
        GROUP BY 1
      )
    SELECT strftime(${PERIODS[granularity].label}, p.period) AS period,
      coalesce(r.teardowns, 0) AS teardowns,
      coalesce(r.parts, 0) AS parts,
      round(coalesce(r.mass_g, 0) / 1000.0, 3) AS mass_kg,
      coalesce(r.images, 0) AS images,
      coalesce(r.users_new, 0) AS users_new
    FROM periods p
    LEFT JOIN day_counts r ON r.period = p.period
    ORDER BY p.period`);
  return { ...range, generated_at: isoSeconds(now), series: rows };
}

export interface CategoryCount {
  name: string;
  count: number;
}

export interface StatsCategories {
  generated_at: string;
  limit: number;
  scope: StatsScope;
  categories: CategoryCount[];
}

/** The records of a scope, from a `product_type_counts` row. */
const SCOPE_COUNTS: Record<StatsScope, SQL> = {
  products: sql`${productTypeCounts.base_products}`,
  components: sql`${productTypeCounts.components}`,
  all: sql`${productTypeCounts.base_products} + ${productTypeCounts.components}`,
};

/**
 * The categories linked to the product types of the records in scope, by number of records
 * (most first, ties by name, then id). Each category counts on its own, so two categories of the
 * same name in different taxonomies are two entries; a record counts once per category, since a
 * type links to a category at most once.
 */
export async function statsCategories(
  svc: Pick<Services, "db">,
  query: { limit: number; scope: StatsScope },
  now: Date,
): Promise<StatsCategories> {
  // Per product type from its counter, so the statement reads one row per type and link.
  const records = sql<number>`sum(${SCOPE_COUNTS[query.scope]})`;
  const rows = await svc.db.all<CategoryCount>(
    svc.db
      .select({ name: categories.name, count: records.as("count") })
      .from(productTypeCounts)
      .innerJoin(productTypeCategories, eq(productTypeCategories.product_type_id, productTypeCounts.product_type_id))
      .innerJoin(categories, eq(categories.id, productTypeCategories.category_id))
      .groupBy(categories.id)
      .having(gt(records, 0))
      .orderBy(desc(records), asc(categories.name), asc(categories.id))
      .limit(query.limit),
  );
  return { generated_at: isoSeconds(now), limit: query.limit, scope: query.scope, categories: rows };
}

/** pass, fail and not_applicable counts of one check. */
export type CheckCounts = Record<QualityStatus, number>;

export interface StatsQuality {
  generated_at: string;
  base_products: Record<QualityCheckCode, CheckCounts>;
  components: Record<QualityCheckCode, CheckCounts>;
  /** Index i counts scores in [i/10, (i+1)/10); the last one, score 1. */
  score_deciles: { base_products: number[]; components: number[] };
}

/** A check's status as a quality profile writes it (`quality_counts.profile`, migration 0023). */
const PROFILE_STATUS: Record<string, QualityStatus> = { p: "pass", f: "fail", "-": "not_applicable" };

/**
 * The dataset's quality (docs/quality.md): per kind of record, per check, how many records pass,
 * fail or are not checked, and their scores in tenths. Summed from `quality_counts` (how many
 * records have each quality profile), which triggers keep as records change (migration 0023): a
 * few hundred rows at most, however large the dataset.
 */
export async function statsQuality(svc: Pick<Services, "db">, now: Date): Promise<StatsQuality> {
  const rows = await svc.db.all<{ base: 0 | 1; profile: string; records: number }>(
    svc.db
      .select({ base: qualityCounts.base, profile: qualityCounts.profile, records: qualityCounts.records })
      .from(qualityCounts)
      .where(gt(qualityCounts.records, 0)),
  );
  const of = (base: 0 | 1) => {
    const checks = Object.fromEntries(QUALITY_CHECK_CODES.map((code) => [code, { pass: 0, fail: 0, not_applicable: 0 }])) as Record<
      QualityCheckCode,
      CheckCounts
    >;
    const deciles: number[] = Array(11).fill(0);
    for (const row of rows) {
      if (row.base !== base) continue;
      const [statuses = "", decile = "0"] = row.profile.split(":");
      QUALITY_CHECK_CODES.forEach((code, i) => {
        checks[code][PROFILE_STATUS[statuses[i] ?? "-"] ?? "not_applicable"] += row.records;
      });
      deciles[Number(decile)] = (deciles[Number(decile)] ?? 0) + row.records;
    }
    return { checks, deciles };
  };
  const base = of(1);
  const components = of(0);
  return {
    generated_at: isoSeconds(now),
    base_products: base.checks,
    components: components.checks,
    score_deciles: { base_products: base.deciles, components: components.deciles },
  };
}
