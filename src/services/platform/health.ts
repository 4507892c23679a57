import { sql } from "drizzle-orm";
import type { Services } from "../../container";
import type { Logger } from "../../lib/logger";

export type CheckStatus = "ok" | "fail";

export interface HealthReport {
  status: "healthy" | "unhealthy";
  checks: { d1: CheckStatus; kv: CheckStatus; r2: CheckStatus };
}

const PROBE_TIMEOUT_MS = 3_000;

async function probe(name: string, run: () => Promise<unknown>, log: Logger): Promise<CheckStatus> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("probe timed out")), PROBE_TIMEOUT_MS);
  });
  try {
    await Promise.race([run(), timeout]);
    return "ok";
  } catch (error) {
    log.error("health probe failed", { probe: name, error });
    return "fail";
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * Probes each storage binding with a read (KV allows one write per second per key, so probes
 * never write). The D1 probe reads the users table, so a database without the schema counts as
 * failed. Each failure is logged with its error; the report itself carries only ok/fail.
 */
export async function checkHealth(svc: Pick<Services, "db" | "bindings" | "log">): Promise<HealthReport> {
  const { log } = svc;
  const [d1, kv, r2] = await Promise.all([
    // Raw: the smallest read that touches a table, to probe the database.
    probe("d1", () => svc.db.run(sql`SELECT 1 FROM users LIMIT 1`), log),
    probe("kv", () => svc.bindings.KV.get("health:probe"), log),
    probe("r2", () => svc.bindings.UPLOADS.head("health/probe"), log),
  ]);
  const healthy = d1 === "ok" && kv === "ok" && r2 === "ok";
  return { status: healthy ? "healthy" : "unhealthy", checks: { d1, kv, r2 } };
}
