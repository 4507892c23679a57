import { createRoute, type z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../lib/openapi";
import { problemResponses } from "../../lib/problem";
import { CategoryLinkParamsSchema, CategoryLinksAddSchema } from "../materials/materials.schemas";

// What the admin routes of taxonomies, categories, materials and product types share: the access
// and effects sentences, and (for the kinds that link to categories)
// the two category-link routes, declared once per kind.

// No `authenticate` on these routes: `adminOnly` (app.ts) guards all of /v1/admin/* before they run.
export const ADMIN_ONLY =
  "Superusers with TOTP only: anonymous 401, anyone else 403 `SUPERUSER_REQUIRED`, a superuser without TOTP 403 `ADMIN_TOTP_REQUIRED`.";
export const WRITE_EFFECTS = "Audited (`admin.reference.*`); clears the `reference-data` cache before answering.";

/** A required JSON request body of `schema`. */
export const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

/** A JSON answer of `schema`; each route gives its own description. */
export const jsonAnswer =
  <T extends z.ZodType>(schema: T) =>
  (description: string) => ({ description, content: { "application/json": { schema } } });

/** The `responses` of an admin DELETE: 204, the refusals every one has, and the kind's own (`refusals`). */
export const deleteResponses = <const S extends readonly number[]>(...refusals: S) => ({
  204: { description: "Deleted." },
  ...problemResponses(401, 403, 404, 422, ...refusals),
});

interface LinkedKindDocs<S extends z.ZodType> {
  /** `/admin/materials`, `/admin/product-types`. */
  base: "/admin/materials" | "/admin/product-types";
  /** `Material`, `ProductType`: the operation ids' stem. */
  stem: "Material" | "ProductType";
  /** `material`, `product type`. */
  what: string;
  notFoundCode: string;
  detail: S;
}

/** `POST <base>/{id}/categories` and `DELETE <base>/{id}/categories/{category_id}` of one kind. */
export function categoryLinkRoutes<S extends z.ZodType>(docs: LinkedKindDocs<S>) {
  const unknown = `An unknown ${docs.what}: 404 \`${docs.notFoundCode}\`.`;
  const addCategories = createRoute({
    method: "post",
    path: `${docs.base}/{id}/categories`,
    operationId: `adminAdd${docs.stem}Categories`,
    tags: ["Admin"],
    summary: `Link a ${docs.what} to categories`,
    description:
      `Adds links to 1..100 categories; links the ${docs.what} already has are kept, so repeating the request is harmless. ` +
      `Unknown category ids: 422 pointing at each (\`/category_ids/<i>\`), and nothing is linked. ${unknown} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
    security: SIGNED_IN,
    request: { params: CategoryLinkParamsSchema.pick({ id: true }), body: json(CategoryLinksAddSchema) },
    responses: {
      200: jsonAnswer(docs.detail)(`The ${docs.what} with all its categories.`),
      ...problemResponses(401, 403, 404, 413, 415, 422),
    },
  });
  const removeCategory = createRoute({
    method: "delete",
    path: `${docs.base}/{id}/categories/{category_id}`,
    operationId: `adminRemove${docs.stem}Category`,
    tags: ["Admin"],
    summary: `Unlink a ${docs.what} from a category`,
    description: `Removes one link. ${unknown} Not linked to that category: 404 \`CATEGORY_LINK_NOT_FOUND\`. ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
    security: SIGNED_IN,
    request: { params: CategoryLinkParamsSchema },
    responses: { 204: { description: "Unlinked." }, ...problemResponses(401, 403, 404, 422) },
  });
  return { addCategories, removeCategory };
}
