import type { AppRouteHandler } from "../../env";
import { listOutbox } from "../../services/platform/dev-outbox";
import type { readOutbox, sendToOutbox } from "./dev.routes";

export const getOutbox: AppRouteHandler<typeof readOutbox> = async (c) => {
  const { to } = c.req.valid("query");
  return c.json({ items: await listOutbox(c.get("services").bindings.KV, to) }, 200);
};

export const postOutbox: AppRouteHandler<typeof sendToOutbox> = async (c) => {
  const message = c.req.valid("json");
  await c.get("services").email.send(message);
  return c.body(null, 204);
};
