import { z } from "@hono/zod-openapi";
import { TAXONOMY_DOMAINS } from "../../db/schema";
import { pagedSchema } from "../../lib/pagination";

const timestamp = z.string().openapi({ example: "2026-05-01T12:00:00Z" });

const EXAMPLE = {
  id: 3,
  name: "WEEE categories",
  version: "2018",
  description: "The categories of electrical and electronic equipment of Directive 2012/19/EU, Annex III.",
  domains: ["products" as const],
  source: "https://eur-lex.europa.eu/eli/dir/2012/19/oj",
  created_at: "2026-05-01T12:00:00Z",
  updated_at: "2026-05-01T12:00:00Z",
};

export const TaxonomySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    version: z.string().openapi({ description: "The taxonomy's own version label; name and version are unique together." }),
    description: z.string().nullable(),
    domains: z
      .array(z.enum(TAXONOMY_DOMAINS))
      .openapi({ description: "What the taxonomy classifies, in the order materials, products, other." }),
    source: z.string().nullable().openapi({ description: "Where the taxonomy comes from: a URL or a citation." }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi("Taxonomy", { example: EXAMPLE });

export const TaxonomyPageSchema = pagedSchema(TaxonomySchema, "TaxonomyPage");

export const TaxonomyDetailSchema = TaxonomySchema.extend({
  category_count: z.number().int().openapi({ description: "Its categories of every level." }),
}).openapi("TaxonomyDetail", { example: { ...EXAMPLE, category_count: 14 } });
