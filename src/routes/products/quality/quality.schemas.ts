import { z } from "@hono/zod-openapi";
import { QUALITY_CHECK_CODES, QUALITY_STATUSES } from "../../../lib/record-quality";

export const QualityCheckCodeSchema = z.enum(QUALITY_CHECK_CODES).openapi("QualityCheckCode", {
  description: "A record-quality check (docs/quality.md).",
  example: "components_mass_balance",
});

const ScoreSchema = z.number().min(0).max(1);

export const QualityCheckSchema = z
  .object({
    code: QualityCheckCodeSchema,
    status: z.enum(QUALITY_STATUSES),
    detail: z.string().openapi({ description: "What the check found, with the numbers it compared." }),
  })
  .openapi("QualityCheck", {
    example: {
      code: "components_mass_balance",
      status: "fail",
      detail:
        "The 3 components (weight_g x amount_in_parent) add up to 980 g against a weight of 1250 g: 270 g apart, beyond the tolerance of 125 g (10 %).",
    },
  });

const failingShape = Object.fromEntries(QUALITY_CHECK_CODES.map((code) => [code, z.number().int().min(0)])) as Record<
  (typeof QUALITY_CHECK_CODES)[number],
  z.ZodNumber
>;

export const TreeQualitySchema = z
  .object({
    records: z.number().int().openapi({ description: "Records in the tree, the base product included." }),
    score_mean: ScoreSchema.openapi({ description: "Mean `quality_score` over them, 3 decimals." }),
    failing: z.object(failingShape).openapi({ description: "How many records of the tree fail each check." }),
    lowest: z
      .array(z.object({ id: z.number().int(), name: z.string(), score: ScoreSchema }))
      .openapi({ description: "At most 20 records of the tree, lowest score first, then by id: where to start." }),
  })
  .openapi("TreeQuality");

export const RecordQualitySchema = z
  .object({
    record_id: z.number().int(),
    score: ScoreSchema.openapi({
      description: "The record's `quality_score`: passes / (passes + fails), 3 decimals; 1 when no check applies.",
    }),
    checks: z.array(QualityCheckSchema).openapi({ description: "Every check, in the order of docs/quality.md." }),
    tree: TreeQualitySchema.optional().openapi({ description: "Base products only: the whole tree, the record itself included." }),
  })
  .openapi("RecordQuality", {
    example: {
      record_id: 17,
      score: 0.714,
      checks: [
        { code: "has_product_type", status: "pass", detail: "Product type 3." },
        { code: "has_weight", status: "pass", detail: "1250 g." },
        { code: "has_dimensions", status: "fail", detail: "Not set: depth_cm." },
        { code: "has_image", status: "pass", detail: "2 clean images." },
        { code: "has_breakdown", status: "pass", detail: "3 components, 1 bill-of-materials entry." },
        {
          code: "components_mass_balance",
          status: "fail",
          detail:
            "The 3 components (weight_g x amount_in_parent) add up to 980 g against a weight of 1250 g: 270 g apart, beyond the tolerance of 125 g (10 %).",
        },
        {
          code: "materials_mass_balance",
          status: "pass",
          detail:
            "The 1 bill-of-materials entry in kg or g adds up to 1200 g against a weight of 1250 g: 50 g apart, within the tolerance of 125 g (10 %).",
        },
        { code: "density_plausible", status: "not_applicable", detail: "Needs weight_g and all three dimensions." },
        { code: "has_circularity_notes", status: "pass", detail: "Circularity notes are set." },
      ],
      tree: {
        records: 4,
        score_mean: 0.554,
        failing: {
          has_product_type: 0,
          has_weight: 1,
          has_dimensions: 4,
          has_image: 3,
          has_breakdown: 1,
          components_mass_balance: 1,
          materials_mass_balance: 0,
          density_plausible: 0,
          has_circularity_notes: 0,
        },
        lowest: [
          { id: 20, name: "Lid", score: 0.25 },
          { id: 18, name: "Heating element", score: 0.5 },
          { id: 19, name: "Switch", score: 0.6 },
          { id: 17, name: "Electric kettle", score: 0.714 },
        ],
      },
    },
  });
