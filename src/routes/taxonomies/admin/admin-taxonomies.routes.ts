import { createRoute, z } from "@hono/zod-openapi";
import { TAXONOMY_DOMAINS } from "../../../db/schema";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { multilineText, singleLineText } from "../../../lib/text";
import { IdParamsSchema } from "../../../schemas/params";
import { ADMIN_ONLY, deleteResponses, json, jsonAnswer, WRITE_EFFECTS } from "../../reference/reference-admin";
import { TaxonomySchema } from "../taxonomies.schemas";

// No `authenticate` here: `adminOnly` (app.ts) guards all of /v1/admin/* before these run.

const fields = {
  name: singleLineText().trim().min(1).max(100).openapi({ description: "1 to 100 characters.", example: "WEEE categories" }),
  version: singleLineText()
    .trim()
    .min(1)
    .max(50)
    .openapi({ description: "The taxonomy's own version label; name and version are unique together (taken: 409).", example: "2018" }),
  domains: z
    .array(z.enum(TAXONOMY_DOMAINS))
    .min(1)
    .max(TAXONOMY_DOMAINS.length)
    .refine((domains) => new Set(domains).size === domains.length, { message: "Each domain may appear once." })
    .openapi({ description: "What it classifies: 1 to 3 distinct of materials, products, other.", example: ["products"] }),
  description: multilineText().max(1000).nullable().optional(),
  source: singleLineText()
    .max(500)
    .nullable()
    .optional()
    .openapi({ description: "A URL or a citation.", example: "https://eur-lex.europa.eu/eli/dir/2012/19/oj" }),
};

export const TaxonomyCreateSchema = z
  .strictObject(fields)
  .openapi("TaxonomyCreate", { example: { name: "WEEE categories", version: "2018", domains: ["products"] } });

export const TaxonomyUpdateSchema = z
  .strictObject({ ...fields, name: fields.name.optional(), version: fields.version.optional(), domains: fields.domains.optional() })
  .openapi("TaxonomyUpdate", { description: "Members to change; absent ones stay.", example: { version: "2024" } });

const taxonomy = jsonAnswer(TaxonomySchema);
const NOT_FOUND = "An unknown taxonomy id: 404 `TAXONOMY_NOT_FOUND`.";
const TAKEN = "A name and version another taxonomy has: 409 `TAXONOMY_NAME_TAKEN`.";

export const createTaxonomy = createRoute({
  method: "post",
  path: "/admin/taxonomies",
  operationId: "adminCreateTaxonomy",
  tags: ["Admin"],
  summary: "Create a taxonomy",
  description: `Creates an empty taxonomy; its categories come through \`POST /v1/admin/categories\`. ${TAKEN} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { body: json(TaxonomyCreateSchema) },
  responses: { 201: taxonomy("Created; `Location` names it."), ...problemResponses(401, 403, 409, 413, 415, 422) },
});

export const updateTaxonomy = createRoute({
  method: "patch",
  path: "/admin/taxonomies/{id}",
  operationId: "adminUpdateTaxonomy",
  tags: ["Admin"],
  summary: "Update a taxonomy",
  description: `Changes the members given. ${TAKEN} ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema, body: json(TaxonomyUpdateSchema) },
  responses: { 200: taxonomy("The updated taxonomy."), ...problemResponses(401, 403, 404, 409, 413, 415, 422) },
});

export const deleteTaxonomy = createRoute({
  method: "delete",
  path: "/admin/taxonomies/{id}",
  operationId: "adminDeleteTaxonomy",
  tags: ["Admin"],
  summary: "Delete a taxonomy",
  description: `Deletes the taxonomy with all its categories and their links to materials and product types. ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema },
  responses: deleteResponses(),
});
