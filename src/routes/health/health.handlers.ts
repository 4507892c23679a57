import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { checkHealth } from "../../services/health";
import type { health, live } from "./health.routes";

export const getLive: RouteHandler<typeof live, AppEnv> = (c) => c.json({ status: "alive" as const }, 200);

export const getHealth: RouteHandler<typeof health, AppEnv> = async (c) => {
  const report = await checkHealth(c.get("services"));
  return c.json(report, report.status === "healthy" ? 200 : 503);
};
