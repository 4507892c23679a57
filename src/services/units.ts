import { asc } from "drizzle-orm";
import type { Db } from "../db/client";
import { units } from "../db/schema";

/** Codes of the units a bill-of-materials quantity may use, in display order. One round trip. */
export async function listUnitCodes(db: Db): Promise<string[]> {
  const rows = await db.select({ code: units.code }).from(units).orderBy(asc(units.position));
  return rows.map((row) => row.code);
}
