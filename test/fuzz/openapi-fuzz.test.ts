import { env } from "cloudflare:workers";
import type { Schema as ValidatorSchema } from "@cfworker/json-schema";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appFor } from "../../src/app";
import { openApiDocument } from "../../src/lib/openapi";
import { contractDocument, schemaViolations } from "../support/contract";
import { replayCommand } from "./options";
import { isSelfOperation, type Operation, type OperationObject, RequestArbitraries } from "./requests";
import { SchemaArbitraries } from "./schema-arbitraries";
import { type FileBases, fileBases, send } from "./send";
import { jsonText } from "./values";
import { type Principal, World } from "./world";

// Issue 21, item 11: a property-based fuzz test over the whole OpenAPI document. For every
// operation, fast-check generates requests (valid and invalid path parameters, queries, headers
// and bodies; NUL bytes, lone surrogates, huge numbers, nesting past every bound; uploads of valid
// and mutated images; with and without credentials, as owner, stranger, unverified account and
// superuser) and sends them through the Worker's real fetch handler and bindings. Every answer
// must be no 5xx, a Problem Details body for every 4xx, what the document describes, and free of
// other users' private text. docs/fuzzing.md has the details.
//
// `npm test` runs a bounded pass with a fixed seed (options.ts, FUZZ_DEFAULTS); `npm run fuzz --
// --runs N` runs longer, `--seed S` another sequence, `--only <regex>` some operations, and a
// failure prints the shrunk request and the command that replays it.

const options = inject("fuzz");

const METHODS = ["get", "post", "put", "patch", "delete"];

/** The app this configuration serves (`PLUGIN_RPI_CAM=false` leaves the camera plugin out). */
const served = appFor(env);

/** Every operation of the document; deletions last (children before parents), so the others find their records. */
function operations(): Operation[] {
  const document = openApiDocument(served, "http://localhost") as unknown as { paths: Record<string, Record<string, OperationObject>> };
  const all: Operation[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of METHODS) if (item[method]) all.push({ method, template, object: item[method]! });
  }
  const rank = (operation: Operation) => (operation.method === "delete" ? 1_000 - operation.template.split("/").length : 0);
  return all
    .map((operation, index) => ({ operation, index }))
    .sort((a, b) => rank(a.operation) - rank(b.operation) || a.index - b.index)
    .map(({ operation }) => operation);
}

/**
 * A failure's report without megabytes of generated text (long runs of one character counted,
 * long lines cut) and without lone surrogates, which the pool cannot send to vitest as UTF-8.
 */
function shorten(text: string): string {
  return text
    .replace(/\p{Cs}/gu, "\uFFFD")
    .replace(/(.)\1{99,}/gsu, (run: string, char: string) => `${char.repeat(10)}…(${run.length} × ${JSON.stringify(char)})`)
    .split("\n")
    .map((line) => (line.length > 3_000 ? `${line.slice(0, 3_000)}… (${line.length} chars)` : line))
    .join("\n");
}

const name = (operation: Operation) => `${operation.method.toUpperCase()} ${operation.template}`;

/** A seed per operation from the run's seed, so one operation's sequence does not depend on the others. */
function seedOf(operation: Operation): number {
  let hash = options.seed | 0;
  for (const char of name(operation)) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return hash;
}

const all = operations();
const selected = options.only ? all.filter((operation) => new RegExp(options.only!).test(name(operation))) : all;

describe("fuzz: every operation of the OpenAPI document through the real fetch handler", () => {
  let world: World;
  let bases: FileBases;
  const arbitraries = new RequestArbitraries(openApiDocument(served, "http://localhost") as never);

  beforeAll(async () => {
    console.log(
      `fuzz: seed ${options.seed}, ${options.runs} runs per operation, ${selected.length} operations, time limit ${options.timeLimitMs || "none"} ms per operation`,
    );
    world = await World.create(all.some((operation) => operation.template.startsWith("/v1/plugins/rpi-cam/")));
    bases = await fileBases();
  }, 120_000);

  afterAll(() => world?.close());

  it("generates, for every request body schema, values the schema accepts as valid", () => {
    // The contract's copy of the document: without examples, which the validator would read as schemas.
    const document = contractDocument() as unknown as {
      paths: Record<string, Record<string, OperationObject>>;
      components: { schemas: Record<string, ValidatorSchema> };
    };
    const space = new SchemaArbitraries(document.components.schemas);
    let checked = 0;
    for (const [template, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const schema = item[method]?.requestBody?.content["application/json"]?.schema;
        if (!schema) continue;
        for (const value of fc.sample(space.valid(schema), { numRuns: 20, seed: options.seed })) {
          const text = jsonText(value, () => undefined);
          expect(schemaViolations(JSON.parse(text), schema), `${method.toUpperCase()} ${template}: ${text}`).toEqual([]);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(500);
  });

  for (const operation of selected) {
    it(
      name(operation),
      async ({ task }) => {
        // The statuses answered, for the report printed after the run (vitest.config.ts).
        const counts: Record<number, number> = {};
        task.meta.fuzzStatuses = counts;
        const self = isSelfOperation(name(operation));
        const property = fc.asyncProperty(arbitraries.forOperation(operation), async (request) => {
          let principal: Principal | undefined;
          if (request.as === "scratch" || request.as === "scratch-totp") principal = await world.scratch(request.as === "scratch-totp");
          else if (request.as !== "none") principal = world.principals.get(request.as);
          if (self && principal && !request.as.startsWith("scratch")) throw new Error(`a self operation sent as ${request.as}`);
          const sent = await send(request, world, principal, bases, served);
          counts[sent.status] = (counts[sent.status] ?? 0) + 1;
          if (sent.violations.length > 0) throw new Error(`${sent.violations.join("\n")}\n\nthe request:\n${sent.shown}`);
        });
        try {
          await fc.assert(property, {
            seed: seedOf(operation),
            numRuns: options.runs,
            ...(options.timeLimitMs > 0 ? { interruptAfterTimeLimit: options.timeLimitMs } : {}),
            ...(options.path ? { path: options.path } : {}),
          });
        } catch (error) {
          const pathOf = /path: "([^"]*)"/.exec(String(error))?.[1];
          const replay = replayCommand(options, `^${name(operation).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, pathOf);
          const cause = (error as Error).cause instanceof Error ? `\n\n${((error as Error).cause as Error).message}` : "";
          throw new Error(shorten(`${(error as Error).message}${cause}\n\nseed ${options.seed}, replay: ${replay}`));
        }
      },
      Math.max(600_000, options.runs * 5_000),
    );
  }
});
