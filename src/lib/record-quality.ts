/**
 * The record-quality checks (decisions.md, Record quality; docs/quality.md): what each check
 * reads, its rule in TypeScript (`evaluateQuality`, with a detail that names the numbers) and the
 * same rule in SQL (`CHECK_SQL`, the generated columns `check_<code>` of `products`, which the
 * list filters, the statistics and the releases read). The two are kept equal by a property test
 * that runs the SQL in SQLite against the TypeScript (test/node/lib/record-quality-sql.test.ts).
 *
 * A check reads the record's own fields and seven counts and sums of its neighbours that triggers
 * keep on the record (migration 0023): so no check ever walks a tree, and a score costs nothing
 * to read.
 */

/** The check codes, in the order of decisions.md; also the order of the columns of a release's quality table. */
export const QUALITY_CHECK_CODES = [
  "has_product_type",
  "has_weight",
  "has_dimensions",
  "has_image",
  "has_breakdown",
  "components_mass_balance",
  "materials_mass_balance",
  "density_plausible",
  "has_circularity_notes",
] as const;

export type QualityCheckCode = (typeof QUALITY_CHECK_CODES)[number];

/** What each check asks, in a sentence (the release's quality table and README describe the columns with it). */
export const QUALITY_CHECK_DESCRIPTIONS: Readonly<Record<QualityCheckCode, string>> = {
  has_product_type: "Base products: a product type is set (components: not_applicable).",
  has_weight: "weight_g is set.",
  has_dimensions: "height_cm, width_cm and depth_cm are all set.",
  has_image: "At least one image that passed the malware scan.",
  has_breakdown: "The record has components or at least one bill-of-materials entry.",
  components_mass_balance:
    "The direct components' weight_g x amount_in_parent add up to within 10 % of the record's weight (applicable when the weight and every direct component's weight are set).",
  materials_mass_balance:
    "The bill-of-materials entries in kg and g add up to within 10 % of the record's weight (applicable when the weight is set and there are such entries; m and cm entries are left out).",
  density_plausible: "weight_g / (height_cm x width_cm x depth_cm) lies within 0.005 to 25 g/cm3 (applicable when all four are set).",
  has_circularity_notes: "Base products: circularity_properties is set (components: not_applicable).",
};

export const QUALITY_STATUSES = ["pass", "fail", "not_applicable"] as const;
export type QualityStatus = (typeof QUALITY_STATUSES)[number];

/** The mass-balance checks pass when the sum is within this share of the record's weight. */
export const MASS_BALANCE_TOLERANCE = 0.1;

/** Densities (g/cm³) outside these bounds are nearly always a unit slip. */
export const DENSITY_BOUNDS_G_CM3 = { min: 0.005, max: 25 } as const;

/** What the checks read of a record: its own fields and the counts and sums kept on it (columns of `products`). */
export interface QualityInputs {
  /** Null for a base product. */
  parent_id: number | null;
  product_type_id: number | null;
  weight_g: number | null;
  height_cm: number | null;
  width_cm: number | null;
  depth_cm: number | null;
  /** The stored notes (JSON text), null when there are none. */
  circularity_properties: unknown;
  component_count: number;
  unweighed_component_count: number;
  /** Sum of `weight_g x amount_in_parent` over the direct components that have a weight. */
  components_mass_g: number | null;
  bom_entry_count: number;
  bom_mass_entry_count: number;
  /** Sum of the bill-of-materials entries in `kg` and `g`, in grams. */
  bom_mass_g: number | null;
  clean_image_count: number;
}

export interface QualityCheck {
  code: QualityCheckCode;
  status: QualityStatus;
  detail: string;
}

export interface QualityResult {
  checks: QualityCheck[];
  score: number;
}

/** The generated column that holds a check's status (1 pass, 0 fail, null not applicable). */
export const checkColumn = (code: QualityCheckCode): `check_${QualityCheckCode}` => `check_${code}`;

const TOLERANCE_SQL = String(MASS_BALANCE_TOLERANCE);

/**
 * Each check as an SQL expression over a `products` row: 1 (pass), 0 (fail) or NULL (not
 * applicable). The definitions of the generated columns `check_<code>`.
 */
export const CHECK_SQL: Readonly<Record<QualityCheckCode, string>> = {
  has_product_type: "CASE WHEN parent_id IS NULL THEN product_type_id IS NOT NULL END",
  has_weight: "weight_g IS NOT NULL",
  has_dimensions: "height_cm IS NOT NULL AND width_cm IS NOT NULL AND depth_cm IS NOT NULL",
  has_image: "clean_image_count > 0",
  has_breakdown: "component_count > 0 OR bom_entry_count > 0",
  components_mass_balance:
    "CASE WHEN weight_g IS NOT NULL AND component_count > 0 AND unweighed_component_count = 0 " +
    `THEN abs(components_mass_g - weight_g) <= ${TOLERANCE_SQL} * weight_g END`,
  materials_mass_balance: `CASE WHEN weight_g IS NOT NULL AND bom_mass_entry_count > 0 THEN abs(bom_mass_g - weight_g) <= ${TOLERANCE_SQL} * weight_g END`,
  density_plausible:
    "CASE WHEN weight_g IS NOT NULL AND height_cm IS NOT NULL AND width_cm IS NOT NULL AND depth_cm IS NOT NULL " +
    `THEN weight_g / (height_cm * width_cm * depth_cm) BETWEEN ${DENSITY_BOUNDS_G_CM3.min} AND ${DENSITY_BOUNDS_G_CM3.max} END`,
  has_circularity_notes: "CASE WHEN parent_id IS NULL THEN circularity_properties IS NOT NULL END",
};

const applicableSql = QUALITY_CHECK_CODES.map((code) => `(${checkColumn(code)} IS NOT NULL)`).join(" + ");
const passesSql = QUALITY_CHECK_CODES.map((code) => `coalesce(${checkColumn(code)}, 0)`).join(" + ");

/** `quality_score` over the check columns: passes / (passes + fails), 3 decimals; 1 when no check applies. */
export const QUALITY_SCORE_SQL = `CASE WHEN ${applicableSql} = 0 THEN 1.0 ELSE round(CAST(${passesSql} AS REAL) / (${applicableSql}), 3) END`;

/** passes / (passes + fails), rounded to 3 decimals; 1 when no check applies. */
export function qualityScore(statuses: readonly QualityStatus[]): number {
  const passes = statuses.filter((status) => status === "pass").length;
  const applicable = statuses.filter((status) => status !== "not_applicable").length;
  return applicable === 0 ? 1 : Math.round((passes * 1000) / applicable) / 1000;
}

/** Grams and other amounts as a detail shows them: at most 3 decimals, no trailing zeros. */
function amount(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

function presence(ok: boolean, passed: string, failed: string): { status: QualityStatus; detail: string } {
  return ok ? { status: "pass", detail: passed } : { status: "fail", detail: failed };
}

const notApplicable = (detail: string) => ({ status: "not_applicable" as const, detail });

/** `sum` against `weight` within the tolerance, described with both and how far apart they are. */
function massBalance(what: string, sum: number, weight: number): { status: QualityStatus; detail: string } {
  const apart = Math.abs(sum - weight);
  const allowed = MASS_BALANCE_TOLERANCE * weight;
  const pass = apart <= allowed;
  return {
    status: pass ? "pass" : "fail",
    detail: `${what} ${amount(sum)} g against a weight of ${amount(weight)} g: ${amount(apart)} g apart, ${pass ? "within" : "beyond"} the tolerance of ${amount(allowed)} g (${MASS_BALANCE_TOLERANCE * 100} %).`,
  };
}

/** Every check of a record, in `QUALITY_CHECK_CODES` order, with its score. */
export function evaluateQuality(record: QualityInputs): QualityResult {
  const base = record.parent_id === null;
  const weight = record.weight_g;
  const dims = [record.height_cm, record.width_cm, record.depth_cm];
  const dimNames = ["height_cm", "width_cm", "depth_cm"];
  const missingDims = dimNames.filter((_, i) => dims[i] === null);
  const forBaseOnly = "Checked for base products only.";

  const outcomes: Record<QualityCheckCode, { status: QualityStatus; detail: string }> = {
    has_product_type: base
      ? presence(record.product_type_id !== null, `Product type ${record.product_type_id}.`, "No product type is set.")
      : notApplicable(forBaseOnly),
    has_weight: presence(weight !== null, `${amount(weight ?? 0)} g.`, "weight_g is not set."),
    has_dimensions: presence(
      missingDims.length === 0,
      `${dims.map((d) => amount(d ?? 0)).join(" x ")} cm.`,
      `Not set: ${missingDims.join(", ")}.`,
    ),
    has_image: presence(
      record.clean_image_count > 0,
      `${plural(record.clean_image_count, "clean image")}.`,
      "No clean image (pending and rejected images do not count).",
    ),
    has_breakdown: presence(
      record.component_count > 0 || record.bom_entry_count > 0,
      `${plural(record.component_count, "component")}, ${plural(record.bom_entry_count, "bill-of-materials entry", "bill-of-materials entries")}.`,
      "No components and no bill-of-materials entries.",
    ),
    components_mass_balance:
      weight === null
        ? notApplicable("weight_g is not set.")
        : record.component_count === 0
          ? notApplicable("No components.")
          : record.unweighed_component_count > 0
            ? notApplicable(
                `${record.unweighed_component_count} of ${plural(record.component_count, "component")} ${record.unweighed_component_count === 1 ? "has" : "have"} no weight_g.`,
              )
            : massBalance(
                `The ${plural(record.component_count, "component")} (weight_g x amount_in_parent) ${record.component_count === 1 ? "adds" : "add"} up to`,
                record.components_mass_g ?? 0,
                weight,
              ),
    materials_mass_balance:
      weight === null
        ? notApplicable("weight_g is not set.")
        : record.bom_mass_entry_count === 0
          ? notApplicable("No bill-of-materials entries in kg or g.")
          : massBalance(
              `The ${plural(record.bom_mass_entry_count, "bill-of-materials entry", "bill-of-materials entries")} in kg or g ${record.bom_mass_entry_count === 1 ? "adds" : "add"} up to`,
              record.bom_mass_g ?? 0,
              weight,
            ),
    density_plausible:
      weight === null || missingDims.length > 0
        ? notApplicable("Needs weight_g and all three dimensions.")
        : density(weight, dims[0]!, dims[1]!, dims[2]!),
    has_circularity_notes: base
      ? presence(record.circularity_properties !== null, "Circularity notes are set.", "No circularity notes.")
      : notApplicable(forBaseOnly),
  };
  const checks = QUALITY_CHECK_CODES.map((code) => ({ code, ...outcomes[code] }));
  return { checks, score: qualityScore(checks.map((check) => check.status)) };
}

function density(weight: number, height: number, width: number, depth: number): { status: QualityStatus; detail: string } {
  // The same operations, in the same order, as CHECK_SQL.density_plausible.
  const value = weight / (height * width * depth);
  const { min, max } = DENSITY_BOUNDS_G_CM3;
  const pass = value >= min && value <= max;
  const shown = value >= 0.001 ? String(Number(value.toPrecision(4))) : value.toExponential(3);
  return {
    status: pass ? "pass" : "fail",
    detail: `${amount(weight)} g in ${amount(height * width * depth)} cm³: ${shown} g/cm³, ${pass ? "within" : "outside"} ${min} to ${max} g/cm³${pass ? "" : " (a unit slip? grams for kilograms, millimetres for centimetres)"}.`,
  };
}
