import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createLogger } from "../../src/lib/logger";
import { runDeletionJob } from "../../src/services/deletions/jobs";
import { buildServices } from "../../src/services/platform/build-services";
import { postJson } from "./accounts";

// Helpers of the deletion-job tests. The real deletion queue runs beside the tests (with the test
// configuration: slices of 50 records), so a job may also move on in the background; every slice
// is idempotent, so the tests drive jobs themselves, one slice per call, and assert only what holds
// whoever ran the slices.

/** A base product with `count` direct components (at most 100 a level), each with `nested` components of its own; returns its id and its components' ids. */
export async function productWithComponents(
  headers: Record<string, string>,
  name: string,
  count: number,
  nested = 0,
): Promise<{ id: number; components: number[] }> {
  const components = Array.from({ length: count }, (_, i) => ({
    name: `${name} part ${i}`,
    amount_in_parent: 1,
    components: Array.from({ length: nested }, (_, j) => ({ name: `${name} part ${i}.${j}`, amount_in_parent: 1 })),
  }));
  const response = await postJson("/v1/products", { name, components }, headers);
  expect(response.status, await response.clone().text()).toBe(201);
  const body = (await response.json()) as { id: number; components: { id: number }[] };
  return { id: body.id, components: body.components.map((c) => c.id) };
}

export interface JobRow {
  id: string;
  kind: string;
  record_id: number | null;
  user_id: number;
  content: string | null;
  records_done: number;
  slices: number;
}

export async function deletionJobs(): Promise<JobRow[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, kind, record_id, user_id, content, records_done, slices FROM deletion_jobs ORDER BY created_at, id",
  ).all<JobRow>();
  return results;
}

/** One slice of job `jobId` through its service (what the queue consumer runs), with `vars` changing the configuration. */
export function runOneSlice(jobId: string, vars: Record<string, string> = {}) {
  const svc = buildServices({ ...env, ...vars } as typeof env, { log: createLogger({ test: "deletion-jobs" }) });
  return runDeletionJob(svc, jobId, { deadline: 0 });
}

/** Runs every deletion job to its end, one slice per call; returns the slices this run took. */
export async function finishDeletionJobs(vars: Record<string, string> = {}, maxSlices = 500): Promise<number> {
  for (let slices = 0; slices < maxSlices; slices++) {
    const [job] = await deletionJobs();
    if (!job) return slices;
    await runOneSlice(job.id, vars);
  }
  throw new Error(`deletion jobs still running after ${maxSlices} slices`);
}

export async function countOf(sql: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(`SELECT count(*) AS n FROM (${sql})`)
    .bind(...binds)
    .first<{ n: number }>())!.n;
}
