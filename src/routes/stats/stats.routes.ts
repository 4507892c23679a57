import { createRoute } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";
import { cacheResponse } from "../../middleware/kv-cache";
import { STATS_LIMITS } from "../../services/reference/stats";
import {
  StatsCategoriesQuerySchema,
  StatsCategoriesSchema,
  StatsQualityQuerySchema,
  StatsQualitySchema,
  StatsSeriesQuerySchema,
  StatsSeriesSchema,
  StatsTotalsQuerySchema,
  StatsTotalsSchema,
} from "./stats.schemas";

const CACHED =
  "Public. Answers are cached server-side for five minutes (`X-Cache: hit|miss` in development; `generated_at` says when they were " +
  "computed) and may be cached by clients for a minute. `images` is 0 until media uploads exist.";

export const getStatsTotals = createRoute({
  method: "get",
  path: "/stats/totals",
  operationId: "getStatsTotals",
  tags: ["Statistics"],
  summary: "Totals over the dataset",
  description:
    "Base products (`teardowns`), components at every depth (`parts`), the summed weight of the base products in " +
    `kilograms (\`mass_kg\`, 3 decimals), images, and active accounts (\`users\`). No parameters. ${CACHED}`,
  middleware: [cacheResponse("stats")] as const,
  request: { query: StatsTotalsQuerySchema },
  responses: {
    200: { description: "The totals.", content: { "application/json": { schema: StatsTotalsSchema } } },
    ...problemResponses(422),
  },
});

export const getStatsSeries = createRoute({
  method: "get",
  path: "/stats/series",
  operationId: "getStatsSeries",
  tags: ["Statistics"],
  summary: "Counts per period",
  description:
    "What was created in each day, week (from Monday, ISO weeks), month or year between `start` and `end` (both " +
    "included, UTC): base products, components, the weight of those base products, images and new accounts. Every " +
    "period of the range appears, zero-filled, oldest first; the first and last periods count only the days inside " +
    "the range. Defaults: `granularity=month`, `end` today, `start` `end` minus 30 days (day), 90 days (week) or one " +
    `year (month, year). \`start\` after \`end\`, or more than ${STATS_LIMITS.maxPeriods} periods: 422 ` +
    `(pointer \`#/query/start\`). ${CACHED}`,
  middleware: [cacheResponse("stats")] as const,
  request: { query: StatsSeriesQuerySchema },
  responses: {
    200: { description: "The series.", content: { "application/json": { schema: StatsSeriesSchema } } },
    ...problemResponses(422),
  },
});

export const getStatsCategories = createRoute({
  method: "get",
  path: "/stats/categories",
  operationId: "getStatsCategories",
  tags: ["Statistics"],
  summary: "Most used categories",
  description:
    "The categories linked to the product types of the records in `scope` (base products, components, or all), " +
    "with how many records each covers, most first, ties by name; at most `limit`. A category counts on its own: " +
    `same-named categories of different taxonomies are separate entries. ${CACHED}`,
  middleware: [cacheResponse("stats")] as const,
  request: { query: StatsCategoriesQuerySchema },
  responses: {
    200: { description: "The categories.", content: { "application/json": { schema: StatsCategoriesSchema } } },
    ...problemResponses(422),
  },
});

export const getStatsQuality = createRoute({
  method: "get",
  path: "/stats/quality",
  operationId: "getStatsQuality",
  tags: ["Statistics"],
  summary: "Quality of the dataset",
  description:
    "For base products and for components separately: per quality check (docs/quality.md), how many records pass, fail " +
    "or are not checked, and how their scores spread over tenths (`score_deciles`, 11 counts: [0, 0.1), ..., [0.9, 1), " +
    "and score 1). Public. Cached server-side like the other statistics (`X-Cache: hit|miss`, cleared with `stats`), but " +
    "never older than the data: a cached answer is served only while no record, bill of materials or image changed since " +
    "it was computed (one small D1 read checks that).",
  middleware: [cacheResponse("stats", { freshAfterWrites: true })] as const,
  request: { query: StatsQualityQuerySchema },
  responses: {
    200: { description: "The dataset's quality.", content: { "application/json": { schema: StatsQualitySchema } } },
    ...problemResponses(422),
  },
});
