import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";
import { multilineText, singleLineText } from "../../lib/text";

// Development-only tools: hidden from the schema, and 404 in every other environment.

export const OutboxItemSchema = z.object({
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  created_at: z.string(),
});

export const readOutbox = createRoute({
  method: "get",
  path: "/outbox",
  hide: true,
  request: { query: z.strictObject({ to: z.email() }) },
  responses: {
    200: {
      description: "Messages sent to `to`, newest first.",
      content: { "application/json": { schema: z.object({ items: z.array(OutboxItemSchema) }) } },
    },
    ...problemResponses(404, 422),
  },
});

export const sendToOutbox = createRoute({
  method: "post",
  path: "/outbox",
  hide: true,
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z.strictObject({
            to: z.email(),
            subject: singleLineText().min(1).max(200),
            text: multilineText().min(1).max(100_000),
          }),
        },
      },
    },
  },
  responses: {
    204: { description: "The message went through the email sender into the outbox." },
    ...problemResponses(400, 404, 413, 415, 422),
  },
});
