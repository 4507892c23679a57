// Types for scripts/seed/starter-data.mjs, which the Workers tests import.

export interface TaxonomySeed {
  name: string;
  version: string;
  description: string;
  domains: ("materials" | "products" | "other")[];
  source: string;
}

/** `id` is the category's external id; `parent` its supercategory's external id. */
export interface CategorySeed {
  id: string;
  parent?: string;
  name: string;
  description?: string;
}

export interface MaterialSeed {
  name: string;
  /** External id of the material's category in the materials taxonomy. */
  category: string;
  density: number;
  crm?: boolean;
  description?: string;
}

export interface ProductTypeSeed {
  name: string;
  /** External id of the product type's category in the product taxonomy. */
  category: string;
  description?: string;
}

export const PRODUCT_TAXONOMY: TaxonomySeed;
export const MATERIAL_TAXONOMY: TaxonomySeed;
export const PRODUCT_CATEGORIES: CategorySeed[];
export const MATERIAL_CATEGORIES: CategorySeed[];
export const MATERIALS: MaterialSeed[];
export const PRODUCT_TYPES: ProductTypeSeed[];
export function sqlValue(value: string | number | boolean | null | undefined): string;
export function starterStatements(): string[];
