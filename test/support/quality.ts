import { expect } from "vitest";
import type { components } from "../../clients/typescript/schema";
import { api } from "./http";

// Helpers of the record-quality tests (test/routes/products/quality*.test.ts, stats, releases);
// creating products and reference rows: test/support/releases.ts.

export type RecordQuality = components["schemas"]["RecordQuality"];
export type CheckCode = components["schemas"]["QualityCheckCode"];
export type Status = RecordQuality["checks"][number]["status"];
export type Kind = "products" | "components";

/** GET `/v1/{kind}/{id}/quality`, expecting 200. */
export async function quality(kind: Kind, id: number, headers: Record<string, string> = {}): Promise<RecordQuality> {
  const response = await api(`/v1/${kind}/${id}/quality`, { headers });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as RecordQuality;
}

/** The statuses of a quality answer by check code. */
export function statuses(body: RecordQuality): Record<CheckCode, Status> {
  return Object.fromEntries(body.checks.map((check) => [check.code, check.status])) as Record<CheckCode, Status>;
}

/** The status of one check of a record. */
export async function statusOf(kind: Kind, id: number, code: CheckCode): Promise<Status> {
  return statuses(await quality(kind, id))[code];
}
