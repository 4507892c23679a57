import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { listOutbox } from "../../services/dev-outbox";
import type { readOutbox, sendToOutbox } from "./dev.routes";

export const getOutbox: RouteHandler<typeof readOutbox, AppEnv> = async (c) => {
  const { to } = c.req.valid("query");
  return c.json({ items: await listOutbox(c.get("services").bindings.KV, to) }, 200);
};

export const postOutbox: RouteHandler<typeof sendToOutbox, AppEnv> = async (c) => {
  const message = c.req.valid("json");
  await c.get("services").email.send(message);
  return c.body(null, 204);
};
