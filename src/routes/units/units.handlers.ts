import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { listUnitCodes } from "../../services/units";
import type { listUnits } from "./units.routes";

export const getUnits: RouteHandler<typeof listUnits, AppEnv> = async (c) => {
  const codes = await listUnitCodes(c.get("services"));
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(codes, 200);
};
