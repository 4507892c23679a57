import { asc } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { units } from "../../db/schema";

/** Codes of the units a bill-of-materials quantity may use, in display order. One round trip. */
export async function listUnitCodes(svc: Pick<Services, "db">): Promise<string[]> {
  const [rows] = await batchRows<[{ code: string }]>(svc.db, [
    svc.db.select({ code: units.code }).from(units).orderBy(asc(units.position)),
  ]);
  return rows.map((row) => row.code);
}
