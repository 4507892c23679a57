import { createRoute, z } from "@hono/zod-openapi";
import { pagedSchema } from "../../lib/pagination";
import { problemResponses } from "../../lib/problem";
import { authenticateCarried } from "../../middleware/authenticate";
import { UserProductListQuerySchema } from "../products/products.query";
import { ProductSummarySchema } from "../products/products.schemas";

export const ProfileSchema = z
  .object({
    username: z.string(),
    created_at: z.string().openapi({ description: "When the account was created.", example: "2026-05-01T12:00:00Z" }),
    product_count: z.number().int().openapi({ description: "Base products the user owns (components are not counted)." }),
    total_weight_kg: z
      .number()
      .openapi({ description: "Sum of the base products' `weight_g` in kilograms, to 3 decimals; products without a weight add nothing." }),
    image_count: z
      .number()
      .int()
      .openapi({ description: "Images on the user's base products and components that passed the malware scan." }),
    top_category: z.string().nullable().openapi({
      description: "The category linked to the product types of most of the user's base products (ties by name); null when none has one.",
    }),
  })
  .openapi("PublicProfile", {
    example: {
      username: "ada_l",
      created_at: "2026-05-01T12:00:00Z",
      product_count: 12,
      total_weight_kg: 8.45,
      image_count: 0,
      top_category: "Kettles",
    },
  });

// Any other text is simply a username nobody has (404), so the path is not validated here.
const UsernameParamsSchema = z.object({
  username: z.string().openapi({
    param: { name: "username", in: "path" },
    description: "The username: 2 to 50 characters of `a-z`, `0-9` and `_`.",
    example: "ada_l",
  }),
});

const UserIdParamsSchema = z.object({
  user_id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "user_id", in: "path" }, example: 42 }),
});

const VISIBILITY =
  "The owner's profile visibility decides who may look: `public` everyone, `community` signed-in users, `private` the owner " +
  "and superusers with TOTP. Anyone else, like a missing, deactivated or system account, gets 404 (never 403, so hidden " +
  "profiles are not revealed); the answer depends on the viewer, hence `Cache-Control: no-store`.";

export const getProfile = createRoute({
  method: "get",
  path: "/profiles/{username}",
  operationId: "getProfile",
  tags: ["Users"],
  summary: "Read a public profile",
  description:
    `A user's public profile: username, when they joined, and totals over their base products. ${VISIBILITY} Unknown or ` +
    "hidden: 404 `PROFILE_NOT_FOUND`.",
  middleware: [authenticateCarried] as const,
  request: { params: UsernameParamsSchema },
  responses: {
    200: { description: "The profile.", content: { "application/json": { schema: ProfileSchema } } },
    ...problemResponses(404, 503),
  },
});

export const listUserProducts = createRoute({
  method: "get",
  path: "/users/{user_id}/products",
  operationId: "listUserProducts",
  tags: ["Products"],
  summary: "List one user's base products",
  description:
    "One page of the user's base products, with the filters, search, ordering and paging of `GET /v1/products` " +
    `(docs/product-list.md) except \`owner\`, which the path replaces (sending it: 422). ${VISIBILITY} Unknown or hidden: ` +
    "404 `USER_NOT_FOUND`; a malformed `user_id`: 422.",
  middleware: [authenticateCarried] as const,
  request: { params: UserIdParamsSchema, query: UserProductListQuerySchema },
  responses: {
    200: {
      description: "A page of the user's products.",
      content: { "application/json": { schema: pagedSchema(ProductSummarySchema, "ProductPage") } },
    },
    ...problemResponses(404, 422, 503),
  },
});
