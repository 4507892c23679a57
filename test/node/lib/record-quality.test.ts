import { describe, expect, it } from "vitest";
import {
  evaluateQuality,
  QUALITY_CHECK_CODES,
  type QualityCheckCode,
  type QualityInputs,
  type QualityStatus,
  qualityScore,
} from "../../../src/lib/record-quality.ts";

// The record-quality rules in TypeScript (decisions.md, Record quality): every check passes,
// fails and is not applicable where the contract says, the mass balances at and just beyond their
// 10 % tolerance, the density at and just beyond its bounds. test/node/lib/record-quality-sql.test.ts
// holds the SQL columns to the same answers.

/** A base product with nothing set. */
const EMPTY: QualityInputs = {
  parent_id: null,
  product_type_id: null,
  weight_g: null,
  height_cm: null,
  width_cm: null,
  depth_cm: null,
  circularity_properties: null,
  component_count: 0,
  unweighed_component_count: 0,
  components_mass_g: null,
  bom_entry_count: 0,
  bom_mass_entry_count: 0,
  bom_mass_g: null,
  clean_image_count: 0,
};

const component = (fields: Partial<QualityInputs> = {}): QualityInputs => ({ ...EMPTY, parent_id: 1, ...fields });
const base = (fields: Partial<QualityInputs> = {}): QualityInputs => ({ ...EMPTY, ...fields });

function check(record: QualityInputs, code: QualityCheckCode) {
  return evaluateQuality(record).checks.find((c) => c.code === code)!;
}

const status = (record: QualityInputs, code: QualityCheckCode): QualityStatus => check(record, code).status;

describe("each check: pass, fail, not applicable", () => {
  const cases: [QualityCheckCode, QualityInputs, QualityInputs, QualityInputs][] = [
    // [code, a record that passes, one that fails, one where it does not apply]
    ["has_product_type", base({ product_type_id: 3 }), base(), component({ product_type_id: 3 })],
    [
      "has_circularity_notes",
      base({ circularity_properties: '{"recyclability":"PP"}' }),
      base(),
      component({ circularity_properties: "{}" }),
    ],
    [
      "components_mass_balance",
      base({ weight_g: 1000, component_count: 2, components_mass_g: 1000 }),
      base({ weight_g: 1000, component_count: 2, components_mass_g: 500 }),
      base({ weight_g: 1000, component_count: 2, unweighed_component_count: 1, components_mass_g: 1000 }),
    ],
    [
      "materials_mass_balance",
      base({ weight_g: 1000, bom_entry_count: 1, bom_mass_entry_count: 1, bom_mass_g: 1000 }),
      base({ weight_g: 1000, bom_entry_count: 1, bom_mass_entry_count: 1, bom_mass_g: 2000 }),
      base({ weight_g: 1000, bom_entry_count: 2, bom_mass_entry_count: 0 }),
    ],
    [
      "density_plausible",
      base({ weight_g: 1000, height_cm: 10, width_cm: 10, depth_cm: 10 }),
      base({ weight_g: 1, height_cm: 10, width_cm: 10, depth_cm: 10 }),
      base({ weight_g: 1000, height_cm: 10, width_cm: 10 }),
    ],
  ];
  it.each(cases)("%s", (code, passing, failing, notApplicable) => {
    expect(status(passing, code)).toBe("pass");
    expect(status(failing, code)).toBe("fail");
    expect(status(notApplicable, code)).toBe("not_applicable");
  });

  // Checks that apply to every record: pass and fail, for a base product and a component alike.
  const always: [QualityCheckCode, Partial<QualityInputs>][] = [
    ["has_weight", { weight_g: 0.5 }],
    ["has_dimensions", { height_cm: 1, width_cm: 2, depth_cm: 3 }],
    ["has_image", { clean_image_count: 1 }],
    ["has_breakdown", { bom_entry_count: 1 }],
  ];
  it.each(always)("%s applies to every record", (code, passing) => {
    for (const make of [base, component]) {
      expect(status(make(passing), code)).toBe("pass");
      expect(status(make(), code)).toBe("fail");
    }
  });

  it("has_dimensions fails with any one dimension missing, and says which", () => {
    const result = check(base({ height_cm: 1, depth_cm: 3 }), "has_dimensions");
    expect(result).toEqual({ code: "has_dimensions", status: "fail", detail: "Not set: width_cm." });
  });

  it("has_breakdown passes with components alone or bill-of-materials entries alone", () => {
    expect(status(base({ component_count: 1 }), "has_breakdown")).toBe("pass");
    expect(status(base({ bom_entry_count: 1 }), "has_breakdown")).toBe("pass");
  });

  it("a mass balance needs a weight; the components' one needs components and all of them weighed", () => {
    expect(check(base({ component_count: 1, components_mass_g: 5 }), "components_mass_balance").detail).toBe("weight_g is not set.");
    expect(check(base({ weight_g: 5 }), "components_mass_balance").detail).toBe("No components.");
    expect(check(base({ weight_g: 5, component_count: 3, unweighed_component_count: 2 }), "components_mass_balance").detail).toBe(
      "2 of 3 components have no weight_g.",
    );
    expect(check(base({ bom_mass_entry_count: 1, bom_mass_g: 5 }), "materials_mass_balance").status).toBe("not_applicable");
  });
});

describe("tolerances", () => {
  const components = (sum: number) => base({ weight_g: 1000, component_count: 3, components_mass_g: sum });
  const materials = (sum: number) => base({ weight_g: 1000, bom_entry_count: 2, bom_mass_entry_count: 2, bom_mass_g: sum });

  it("mass balances pass at exactly 10 % off either way and fail just beyond", () => {
    for (const [make, code] of [
      [components, "components_mass_balance"],
      [materials, "materials_mass_balance"],
    ] as const) {
      expect(status(make(1100), code)).toBe("pass");
      expect(status(make(900), code)).toBe("pass");
      expect(status(make(1100.001), code)).toBe("fail");
      expect(status(make(899.999), code)).toBe("fail");
      expect(status(make(1000), code)).toBe("pass");
    }
  });

  it("names the numbers a mass balance compared", () => {
    expect(check(components(1100.5), "components_mass_balance").detail).toBe(
      "The 3 components (weight_g x amount_in_parent) add up to 1100.5 g against a weight of 1000 g: 100.5 g apart, beyond the tolerance of 100 g (10 %).",
    );
    expect(check(materials(950), "materials_mass_balance").detail).toBe(
      "The 2 bill-of-materials entries in kg or g add up to 950 g against a weight of 1000 g: 50 g apart, within the tolerance of 100 g (10 %).",
    );
  });

  it("density passes from 0.005 to 25 g/cm³, both included, and fails just outside", () => {
    const cube = (weight: number) => base({ weight_g: weight, height_cm: 10, width_cm: 10, depth_cm: 10 });
    expect(status(cube(5), "density_plausible")).toBe("pass");
    expect(status(cube(25_000), "density_plausible")).toBe("pass");
    expect(status(cube(4.99), "density_plausible")).toBe("fail");
    expect(status(cube(25_000.01), "density_plausible")).toBe("fail");
    // A 180 g phone of 15 x 7 x 0.8 cm with its weight in kilograms, or its size in millimetres: the slips the check is for.
    expect(status(base({ weight_g: 0.18, height_cm: 15, width_cm: 7, depth_cm: 0.8 }), "density_plausible")).toBe("fail");
    expect(status(base({ weight_g: 180, height_cm: 150, width_cm: 70, depth_cm: 8 }), "density_plausible")).toBe("fail");
    expect(check(cube(5), "density_plausible").detail).toBe("5 g in 1000 cm³: 0.005 g/cm³, within 0.005 to 25 g/cm³.");
  });
});

describe("the score", () => {
  it("is passes over applicable checks, 3 decimals; 1 when none applies", () => {
    expect(qualityScore(["pass", "fail", "fail"])).toBe(0.333);
    expect(qualityScore(["pass", "pass", "fail"])).toBe(0.667);
    expect(qualityScore(["pass", "not_applicable", "fail"])).toBe(0.5);
    expect(qualityScore(["not_applicable", "not_applicable"])).toBe(1);
    expect(qualityScore([])).toBe(1);
    expect(qualityScore(["fail"])).toBe(0);
  });

  it("lists every check in the contract's order", () => {
    const result = evaluateQuality(base({ weight_g: 10 }));
    expect(result.checks.map((c) => c.code)).toEqual([...QUALITY_CHECK_CODES]);
    // A bare base product with a weight: weight passes; type, dimensions, image, breakdown, notes fail.
    expect(result.score).toBe(0.167);
  });

  it("counts a component's checks without the base-product-only ones", () => {
    const result = evaluateQuality(component({ weight_g: 10, clean_image_count: 1 }));
    expect(result.checks.filter((c) => c.status === "not_applicable").map((c) => c.code)).toEqual([
      "has_product_type",
      "components_mass_balance",
      "materials_mass_balance",
      "density_plausible",
      "has_circularity_notes",
    ]);
    expect(result.score).toBe(0.5);
  });
});
