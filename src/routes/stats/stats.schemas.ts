import { z } from "@hono/zod-openapi";
import { STATS_GRANULARITIES, STATS_LIMITS, STATS_SCOPES } from "../../services/reference/stats";

// Query and answer schemas of /v1/stats/*. Queries are strict: an unknown parameter is a 422
// pointing at `#/query/<name>`, like every other malformed one.

const generatedAt = z
  .string()
  .openapi({ description: "When the numbers were computed (answers are cached for up to five minutes).", example: "2026-05-01T12:00:00Z" });

const imagesCount = z
  .number()
  .int()
  .openapi({ description: "Images that passed the malware scan (created in the period, for series points).", example: 0 });

const isoDay = (description: string, example: string) =>
  z.iso
    // Abort on a malformed date, so it is not also reported as too early.
    .date({ message: "Expected a date as YYYY-MM-DD.", abort: true })
    .refine((date) => date >= STATS_LIMITS.earliestDate, `Dates start at ${STATS_LIMITS.earliestDate}.`)
    .optional()
    .openapi({ description, example });

/** Totals take no parameters; any given is refused like an unknown one elsewhere. */
export const StatsTotalsQuerySchema = z.strictObject({});

export const StatsTotalsSchema = z
  .object({
    generated_at: generatedAt,
    totals: z.object({
      teardowns: z.number().int().openapi({ description: "Base products." }),
      parts: z.number().int().openapi({ description: "Components, at every depth." }),
      mass_kg: z.number().openapi({ description: "Summed weight of the base products that give one, in kilograms (3 decimals)." }),
      images: imagesCount,
      users: z.number().int().openapi({ description: "Active accounts." }),
    }),
  })
  .openapi("StatsTotals", {
    example: { generated_at: "2026-05-01T12:00:00Z", totals: { teardowns: 412, parts: 5230, mass_kg: 1873.25, images: 2210, users: 96 } },
  });

export const StatsSeriesQuerySchema = z.strictObject({
  granularity: z
    .enum(STATS_GRANULARITIES)
    .default("month")
    .openapi({ description: "Length of one period; a week starts on Monday (ISO weeks).", example: "month" }),
  start: isoDay(
    "First day of the range, included. Default: `end` minus 30 days (day), 90 days (week), one year (month, year).",
    "2025-05-01",
  ),
  end: isoDay("Last day of the range, included. Default: today (UTC).", "2026-05-01"),
});

export type StatsSeriesQuery = z.infer<typeof StatsSeriesQuerySchema>;

export const StatsSeriesPointSchema = z
  .object({
    period: z.string().openapi({
      description:
        "The period: `2026-05-01` (day), the Monday that starts the ISO week `2026-04-27` (week), `2026-05` (month), `2026` (year).",
    }),
    teardowns: z.number().int().openapi({ description: "Base products created in the period." }),
    parts: z.number().int().openapi({ description: "Components created in the period." }),
    mass_kg: z.number().openapi({ description: "Summed weight of the base products created in the period, in kilograms (3 decimals)." }),
    images: imagesCount,
    users_new: z.number().int().openapi({ description: "Accounts created in the period." }),
  })
  .openapi("StatsSeriesPoint", { example: { period: "2026-05", teardowns: 12, parts: 140, mass_kg: 23.5, images: 0, users_new: 3 } });

export const StatsSeriesSchema = z
  .object({
    granularity: z.enum(STATS_GRANULARITIES),
    start: z.string().openapi({ description: "First day of the range (the default filled in)." }),
    end: z.string().openapi({ description: "Last day of the range (the default filled in)." }),
    generated_at: generatedAt,
    series: z
      .array(StatsSeriesPointSchema)
      .openapi({ description: "Every period of the range, oldest first, with zeros where nothing was created." }),
  })
  .openapi("StatsSeries", {
    example: {
      granularity: "month",
      start: "2026-03-15",
      end: "2026-05-01",
      generated_at: "2026-05-01T12:00:00Z",
      series: [
        { period: "2026-03", teardowns: 4, parts: 51, mass_kg: 7.2, images: 0, users_new: 2 },
        { period: "2026-04", teardowns: 0, parts: 0, mass_kg: 0, images: 0, users_new: 0 },
        { period: "2026-05", teardowns: 1, parts: 9, mass_kg: 1.45, images: 0, users_new: 1 },
      ],
    },
  });

export const StatsCategoriesQuerySchema = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(STATS_LIMITS.categoriesMax)
    .default(STATS_LIMITS.categoriesDefault)
    .openapi({ description: `Most categories to list, 1 to ${STATS_LIMITS.categoriesMax}.`, example: STATS_LIMITS.categoriesDefault }),
  scope: z
    .enum(STATS_SCOPES)
    .default("products")
    .openapi({ description: "Records counted: base products, components, or both.", example: "products" }),
});

export type StatsCategoriesQuery = z.infer<typeof StatsCategoriesQuerySchema>;

export const StatsCategoriesSchema = z
  .object({
    generated_at: generatedAt,
    limit: z.number().int(),
    scope: z.enum(STATS_SCOPES),
    categories: z
      .array(
        z.object({
          name: z.string(),
          count: z.number().int().openapi({ description: "Records in scope whose product type links to the category." }),
        }),
      )
      .openapi({ description: "Most records first, ties by name; categories with no record are left out." }),
  })
  .openapi("StatsCategories", {
    example: {
      generated_at: "2026-05-01T12:00:00Z",
      limit: 10,
      scope: "products",
      categories: [
        { name: "Kitchen appliances", count: 42 },
        { name: "Electronics", count: 17 },
      ],
    },
  });
