import type { AppRouteHandler } from "../../env";
import { checkHealth } from "../../services/platform/health";
import type { health, live } from "./health.routes";

export const getLive: AppRouteHandler<typeof live> = (c) => c.json({ status: "alive" as const }, 200);

export const getHealth: AppRouteHandler<typeof health> = async (c) => {
  const report = await checkHealth(c.get("services"));
  return c.json(report, report.status === "healthy" ? 200 : 503);
};
