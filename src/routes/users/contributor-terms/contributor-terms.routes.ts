import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticate } from "../../../middleware/authenticate";
import { MeSchema } from "../users.routes";

const AcceptTermsSchema = z
  .strictObject({
    version: z
      .number()
      .int()
      .min(1)
      .openapi({ description: "The current version of the contributor terms (`GET` on this path names it).", example: 1 }),
  })
  .openapi("ContributorTermsAcceptance", { example: { version: 1 } });

const ContributorTermsSchema = z
  .object({
    current_version: z.number().int().openapi({ description: "The version an acceptance must name.", example: 1 }),
    accepted_version: z.number().int().nullable().openapi({ description: "The version you accepted; null when none.", example: 1 }),
    accepted_at: z.string().nullable().openapi({ example: "2026-05-01T12:05:00Z" }),
  })
  .openapi("ContributorTerms", { example: { current_version: 1, accepted_version: 1, accepted_at: "2026-05-01T12:05:00Z" } });

const SCOPE =
  "Dataset releases (`/v1/releases`) hold the base products, with all their components, of accounts that accepted the current " +
  "contributor terms (or a later version) when the release's snapshot was taken. Published releases never change: withdrawing " +
  "excludes your contributions from releases made afterwards only.";

export const getContributorTerms = createRoute({
  method: "get",
  path: "/users/me/contributor-terms",
  operationId: "getContributorTerms",
  tags: ["Users"],
  summary: "Read the contributor terms' version and your acceptance",
  description: `The current version of the contributor terms and whether, and when, you accepted it. ${SCOPE}`,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  responses: {
    200: { description: "The terms' version and your acceptance.", content: { "application/json": { schema: ContributorTermsSchema } } },
    ...problemResponses(401, 503),
  },
});

export const acceptContributorTerms = createRoute({
  method: "post",
  path: "/users/me/contributor-terms",
  operationId: "acceptContributorTerms",
  tags: ["Users"],
  summary: "Accept the contributor terms",
  description:
    `Records that you accept the contributor terms of \`version\`, which must be the current one (any other: 422 at \`/version\`). ` +
    `Accepting the version you accepted already changes nothing (\`terms_accepted_at\` stays the first time). ${SCOPE}`,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: { required: true, content: { "application/json": { schema: AcceptTermsSchema } } } },
  responses: {
    200: {
      description: "Your account, with `terms_accepted_version` and `terms_accepted_at`.",
      content: { "application/json": { schema: MeSchema } },
    },
    ...problemResponses(401, 413, 415, 422, 503),
  },
});

export const withdrawContributorTerms = createRoute({
  method: "delete",
  path: "/users/me/contributor-terms",
  operationId: "withdrawContributorTerms",
  tags: ["Users"],
  summary: "Withdraw your acceptance of the contributor terms",
  description: `Both \`terms_accepted_version\` and \`terms_accepted_at\` become null (also when you had not accepted). ${SCOPE}`,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  responses: {
    204: { description: "Withdrawn." },
    ...problemResponses(401, 503),
  },
});
