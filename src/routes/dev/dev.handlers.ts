import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { listOutbox } from "../../services/dev-outbox";
import { createEmailSender } from "../../services/email";
import type { readOutbox, sendToOutbox } from "./dev.routes";

export const getOutbox: RouteHandler<typeof readOutbox, AppEnv> = async (c) => {
  const { to } = c.req.valid("query");
  return c.json({ items: await listOutbox(c.env.KV, to) }, 200);
};

export const postOutbox: RouteHandler<typeof sendToOutbox, AppEnv> = async (c) => {
  const message = c.req.valid("json");
  await createEmailSender(c.get("config"), c.env.KV, c.get("log")).send(message);
  return c.body(null, 204);
};
