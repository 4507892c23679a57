import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { appFor } from "../../src/app";
import worker from "../../src/index";
import type { Problem } from "../../src/lib/problem";
import { assertMatchesContract } from "./contract";

export const ORIGIN = "http://localhost";

/** Variables of a production deployment (production refuses the tests' cheap Argon2id settings). */
export const PRODUCTION_VARS = { ENVIRONMENT: "production", ARGON2_MEMORY_KIB: "19456", ARGON2_ITERATIONS: "2" };

/**
 * A request to the Worker under test, through its real fetch handler and bindings. The answer is
 * checked against the OpenAPI document (test/support/contract.ts) before the test sees it.
 */
export async function api(path: string, init?: RequestInit): Promise<Response> {
  const request = new Request(new URL(path, ORIGIN), init);
  const response = await exports.default.fetch(request);
  await assertMatchesContract(request.method, new URL(request.url), response);
  return response;
}

/**
 * The same, with some variables changed (ENVIRONMENT=production, say). The bindings stay the
 * real local ones; only configuration values differ.
 */
export async function apiWithVars(vars: Record<string, string>, path: string, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(new URL(path, ORIGIN), init);
  const changed = { ...env, ...vars } as typeof env;
  const response = await worker.fetch(request, changed, ctx);
  await waitOnExecutionContext(ctx);
  // Checked against the document of what this configuration serves (plugins may be off).
  await assertMatchesContract(request.method, new URL(request.url), response, appFor(changed));
  return response;
}

/** Asserts a Problem Details response with `status` and `code`, and returns its body. */
export async function expectProblem(response: Response, status: number, code: string): Promise<Problem> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(response.headers.get("cache-control")).toBe("no-store");
  const body = (await response.json()) as Problem;
  expect(body).toMatchObject({ type: "about:blank", status, code });
  expect(body.request_id).toBe(response.headers.get("x-request-id"));
  return body;
}

/** D1 round trips the request made, from the development `Server-Timing` header. */
export function roundTrips(response: Response): number {
  const header = response.headers.get("server-timing") ?? "";
  const match = /d1;desc="(\d+) round trips"/.exec(header);
  if (!match) throw new Error(`no d1 entry in Server-Timing: ${header}`);
  return Number(match[1]);
}

/** What the request cost D1 beside its round trips (decisions.md "Request cost"), from the development `Server-Timing` header. */
export interface D1Cost {
  rowsRead: number;
  rowsWritten: number;
  /** Statements D1 answered without meta (src/db/client.ts): their rows are not in the counts. */
  unmetered: number;
  durationMs: number;
}

export function d1Cost(response: Response): D1Cost {
  const header = response.headers.get("server-timing") ?? "";
  const rows = /d1-rows;desc="read (\d+), written (\d+)(?:, (\d+) unmetered)?"/.exec(header);
  const time = /d1-time;dur=([\d.]+)/.exec(header);
  if (!rows || !time) throw new Error(`no d1-rows or d1-time entry in Server-Timing: ${header}`);
  return { rowsRead: Number(rows[1]), rowsWritten: Number(rows[2]), unmetered: Number(rows[3] ?? 0), durationMs: Number(time[1]) };
}

/** Rows the request read in D1, asserting that every statement was metered. */
export function rowsRead(response: Response): number {
  const cost = d1Cost(response);
  if (cost.unmetered > 0) throw new Error(`${cost.unmetered} statements of the request were not metered: its rows read are a lower bound`);
  return cost.rowsRead;
}

/** Counter-store (rate limiter) calls the request made, from the development `Server-Timing` header. */
export function limiterCalls(response: Response): number {
  const header = response.headers.get("server-timing") ?? "";
  const match = /limiter;desc="(\d+) calls"/.exec(header);
  if (!match) throw new Error(`no limiter entry in Server-Timing: ${header}`);
  return Number(match[1]);
}

/** Each `Set-Cookie` of a response (workerd has `Headers.getSetCookie()`; the pinned workers-types do not declare it). */
export function getSetCookie(response: Response): string[] {
  return (response.headers as Headers & { getSetCookie(): string[] }).getSetCookie();
}

/**
 * The body as UTF-8 text, whatever its type: workerd warns on `.text()` for a type it does not
 * know as text (application/x-bibtex, say), once per read.
 */
export async function textOf(response: Response): Promise<string> {
  return new TextDecoder().decode(await response.arrayBuffer());
}
