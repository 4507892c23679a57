import { z } from "@hono/zod-openapi";
import { QUALITY_CHECK_CODES } from "../../lib/record-quality";
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

/** The quality statistics take no parameters. */
export const StatsQualityQuerySchema = z.strictObject({});

const CheckCountsSchema = z
  .object({ pass: z.number().int(), fail: z.number().int(), not_applicable: z.number().int() })
  .openapi("QualityCheckCounts");

const checksOf = (records: string) =>
  z
    .object(
      Object.fromEntries(QUALITY_CHECK_CODES.map((code) => [code, CheckCountsSchema])) as Record<
        (typeof QUALITY_CHECK_CODES)[number],
        typeof CheckCountsSchema
      >,
    )
    .openapi({ description: `Per check code, how many ${records} pass, fail or are not checked.` });

const deciles = (records: string) =>
  z
    .array(z.number().int())
    .length(11)
    .openapi({ description: `${records} per score tenth: index i counts scores in [i/10, (i+1)/10), index 10 counts score 1.` });

const exampleCounts = (pass: number, fail: number, notApplicable: number) => ({ pass, fail, not_applicable: notApplicable });

export const StatsQualitySchema = z
  .object({
    generated_at: z.string().openapi({ description: "When the numbers were computed.", example: "2026-05-01T12:00:00Z" }),
    base_products: checksOf("base products"),
    components: checksOf("components"),
    score_deciles: z.object({ base_products: deciles("Base products"), components: deciles("Components") }),
  })
  .openapi("StatsQuality", {
    example: {
      generated_at: "2026-05-01T12:00:00Z",
      base_products: {
        has_product_type: exampleCounts(380, 32, 0),
        has_weight: exampleCounts(401, 11, 0),
        has_dimensions: exampleCounts(350, 62, 0),
        has_image: exampleCounts(298, 114, 0),
        has_breakdown: exampleCounts(390, 22, 0),
        components_mass_balance: exampleCounts(240, 51, 121),
        materials_mass_balance: exampleCounts(180, 40, 192),
        density_plausible: exampleCounts(330, 4, 78),
        has_circularity_notes: exampleCounts(205, 207, 0),
      },
      components: {
        has_product_type: exampleCounts(0, 0, 5230),
        has_weight: exampleCounts(4100, 1130, 0),
        has_dimensions: exampleCounts(1200, 4030, 0),
        has_image: exampleCounts(900, 4330, 0),
        has_breakdown: exampleCounts(4800, 430, 0),
        components_mass_balance: exampleCounts(610, 120, 4500),
        materials_mass_balance: exampleCounts(3900, 210, 1120),
        density_plausible: exampleCounts(1100, 30, 4100),
        has_circularity_notes: exampleCounts(0, 0, 5230),
      },
      score_deciles: {
        base_products: [0, 0, 3, 10, 25, 60, 90, 120, 70, 24, 10],
        components: [0, 40, 300, 900, 1400, 1300, 800, 350, 100, 30, 10],
      },
    },
  });
