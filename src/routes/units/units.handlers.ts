import type { AppRouteHandler } from "../../env";
import { listUnitCodes } from "../../services/reference/units";
import type { listUnits } from "./units.routes";

export const getUnits: AppRouteHandler<typeof listUnits> = async (c) => {
  const codes = await listUnitCodes(c.get("services"));
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(codes, 200);
};
