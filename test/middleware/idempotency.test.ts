import { env } from "cloudflare:workers";
import { createRoute, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import type { Context } from "hono";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { batchRows } from "../../src/db/client";
import type { AppEnv } from "../../src/env";
import { ApiError, problemResponses } from "../../src/lib/problem";
import { createRouter } from "../../src/lib/router";
import { authenticate } from "../../src/middleware/authenticate";
import { onError } from "../../src/middleware/error-handler";
import { IdempotencyKeyHeaderSchema, idempotent } from "../../src/middleware/idempotency";
import { requestContext } from "../../src/middleware/request-context";
import { requestServices } from "../../src/middleware/request-services";
import { commitStatements, isKeyLost, requestInProgress } from "../../src/services/platform/idempotency";
import { bearer, verifiedUser } from "../support/accounts";
import { expectProblem, roundTrips } from "../support/http";
import { captureLogs } from "../support/logs";

// A create route of its own, built the way the product routes are (router factory, route-level
// middleware after authentication, validators, the real error handler), so the middleware is
// tested apart from the product code. Its handler inserts a real row into `materials`.

const ChildSchema = z.object({ id: z.number().int(), name: z.string(), parent_id: z.number().int() });

const createChild = createRoute({
  method: "post",
  path: "/parents/{parent_id}/children",
  middleware: [authenticate("required"), idempotent()] as const,
  request: {
    params: z.object({ parent_id: z.coerce.number().int().positive() }),
    headers: IdempotencyKeyHeaderSchema,
    body: { required: true, content: { "application/json": { schema: z.strictObject({ name: z.string().min(1) }) } } },
  },
  responses: {
    201: { description: "Created.", content: { "application/json": { schema: ChildSchema } } },
    ...problemResponses(400, 401, 409, 422, 500, 503),
  },
});

// The same, for a route whose create marks the key committed in its own batch, as the product
// creates do, and rebuilds its answer from the record for a retry that finds the key committed.
const recoverChild = async (c: Context<AppEnv>, id: number): Promise<Response | null> => {
  const rows = await c.get("services").db.all<{ name: string }>(sql`SELECT name FROM materials WHERE id = ${id}`);
  if (!rows[0]) return null;
  const parent = Number(c.req.param("parent_id"));
  return c.json({ id, name: rows[0].name.split("#")[0]!, parent_id: parent }, 201, { Location: `/parents/${parent}/children/${id}` });
};

const createCommittedChild = createRoute({
  ...createChild,
  path: "/parents/{parent_id}/committed-children",
  middleware: [authenticate("required"), idempotent({ recover: recoverChild })] as const,
});

// Without authentication in front: the middleware must still refuse an anonymous caller.
const unauthenticated = createRoute({
  method: "post",
  path: "/unauthenticated",
  middleware: [idempotent()] as const,
  responses: { 204: { description: "Done." } },
});

/** What the handler does before inserting, one entry per request that reaches it (then nothing). */
const hooks: (() => Promise<void>)[] = [];
/** What the committing handler does after its batch committed, one entry per request. */
const afterCommit: (() => Promise<void>)[] = [];
let handlerRuns = 0;

const app = createRouter();
app.use(requestContext);
app.use(requestServices([]));
app.openapi(createChild, async (c) => {
  handlerRuns++;
  await hooks.shift()?.();
  const { parent_id } = c.req.valid("param");
  const { name } = c.req.valid("json");
  // A distinct stored name per run, so that a duplicate create shows up as a second row.
  const row = await c
    .get("services")
    .db.get<{ id: number }>(sql`INSERT INTO materials (name) VALUES (${`${name}#${crypto.randomUUID()}`}) RETURNING id`);
  return c.json({ id: row.id, name, parent_id }, 201, {
    Location: `/parents/${parent_id}/children/${row.id}`,
    ETag: `"${row.id}-1"`,
  });
});
app.openapi(createCommittedChild, async (c) => {
  handlerRuns++;
  await hooks.shift()?.();
  const { parent_id } = c.req.valid("param");
  const { name } = c.req.valid("json");
  const stored = `${name}#${crypto.randomUUID()}`;
  const held = c.get("idempotencyKey");
  const commit = held ? commitStatements(held, sql`(SELECT id FROM materials WHERE name = ${stored})`, Math.floor(Date.now() / 1000)) : [];
  let id: number;
  try {
    const [rows] = await batchRows<[{ id: number }, ...never[]]>(c.get("services").db, [
      sql`INSERT INTO materials (name) VALUES (${stored}) RETURNING id`,
      ...commit,
    ]);
    id = rows[0]!.id;
  } catch (error) {
    if (isKeyLost(error)) throw requestInProgress();
    throw error;
  }
  await afterCommit.shift()?.();
  return c.json({ id, name, parent_id }, 201, { Location: `/parents/${parent_id}/children/${id}` });
});
app.openapi(unauthenticated, (c) => c.body(null, 204));
app.onError(onError);

let token: string;
let otherToken: string;

beforeAll(async () => {
  token = (await verifiedUser("idem")).tokens.access_token;
  otherToken = (await verifiedUser("idem")).tokens.access_token;
});

afterEach(() => {
  hooks.length = 0;
  afterCommit.length = 0;
});

let sequence = 0;
const uniqueName = () => `material-${Date.now().toString(36)}-${(sequence++).toString(36)}`;
const newKey = () => crypto.randomUUID();

async function create(
  body: string | Record<string, unknown>,
  {
    key,
    parent = 1,
    query = "",
    as = token,
    route = "children",
  }: { key?: string; parent?: number; query?: string; as?: string; route?: "children" | "committed-children" } = {},
): Promise<Response> {
  return app.request(
    `/parents/${parent}/${route}${query}`,
    {
      method: "POST",
      headers: { ...bearer(as), "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
      body: typeof body === "string" ? body : JSON.stringify(body),
    },
    env,
  );
}

async function materialRows(name: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM materials WHERE name LIKE ? || '#%'").bind(name).first<{ n: number }>();
  return row!.n;
}

async function keyRows(key: string): Promise<Record<string, unknown>[]> {
  return (await env.DB.prepare("SELECT * FROM idempotency_keys WHERE key = ?").bind(key).all()).results;
}

/** A promise the test resolves, and a signal that the handler has started waiting on it. */
function gate() {
  let open!: () => void;
  let entered!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (entered = resolve));
  const hook = async () => {
    entered();
    await opened;
  };
  return { hook, open, reached };
}

describe("without an Idempotency-Key", () => {
  it("does nothing: no claim, no stored response", async () => {
    const name = uniqueName();
    const response = await create({ name });
    expect(response.status).toBe(201);
    // The token check and the insert; nothing for idempotency.
    expect(roundTrips(response)).toBe(2);
    expect(response.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("a retry with the same key", () => {
  it("replays the first response without running the route again", async () => {
    const key = newKey();
    const name = uniqueName();
    const first = await create({ name }, { key });
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    // One round trip more to claim the key, one to store the response.
    expect(roundTrips(first)).toBe(4);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const runs = handlerRuns;

    const retry = await create({ name }, { key });
    expect(retry.status).toBe(201);
    expect(await retry.text()).toBe(firstBody);
    for (const header of ["content-type", "location", "etag"]) {
      expect(retry.headers.get(header), header).toBe(first.headers.get(header));
    }
    expect(retry.headers.get("location")).toMatch(/^\/parents\/1\/children\/\d+$/);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    // The token check and the claim, which found the stored response.
    expect(roundTrips(retry)).toBe(2);
    expect(handlerRuns).toBe(runs);
    expect(await materialRows(name)).toBe(1);
    expect(await keyRows(key)).toHaveLength(1);
  });

  it("is a new request for another user", async () => {
    const key = newKey();
    const name = uniqueName();
    expect((await create({ name }, { key })).status).toBe(201);
    const theirs = await create({ name }, { key, as: otherToken });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(await materialRows(name)).toBe(2);
  });

  it("runs again once the stored response has expired", async () => {
    const key = newKey();
    const name = uniqueName();
    expect((await create({ name }, { key })).status).toBe(201);
    await env.DB.prepare("UPDATE idempotency_keys SET expires_at = unixepoch() - 1 WHERE key = ?").bind(key).run();

    const later = await create({ name }, { key });
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect(await materialRows(name)).toBe(2);
    expect(await keyRows(key)).toHaveLength(1);
  });
});

describe("the same key for another request", () => {
  it("is refused with 422 for another body, even one that only differs in spacing", async () => {
    const key = newKey();
    const name = uniqueName();
    expect((await create({ name }, { key })).status).toBe(201);

    await expectProblem(await create({ name: `${name}-other` }, { key }), 422, "IDEMPOTENCY_KEY_REUSED");
    // The same JSON value in other bytes: the body is compared by its raw bytes.
    await expectProblem(await create(`{ "name": "${name}" }`, { key }), 422, "IDEMPOTENCY_KEY_REUSED");
    expect(await materialRows(name)).toBe(1);
    expect(await materialRows(`${name}-other`)).toBe(0);
  });

  it("is refused with 422 for another query string on the same path", async () => {
    const key = newKey();
    const name = uniqueName();
    expect((await create({ name }, { key, parent: 1 })).status).toBe(201);

    await expectProblem(await create({ name }, { key, parent: 1, query: "?draft=1" }), 422, "IDEMPOTENCY_KEY_REUSED");
    expect(await materialRows(name)).toBe(1);
    // The original is still replayed.
    expect((await create({ name }, { key })).headers.get("idempotent-replayed")).toBe("true");
  });

  it("is another key under another parent: the request runs, and each path replays its own answer", async () => {
    const key = newKey();
    const name = uniqueName();
    const first = await create({ name }, { key, parent: 1 });
    const second = await create({ name }, { key, parent: 2 });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(await materialRows(name)).toBe(2);
    expect(await keyRows(key)).toHaveLength(2);

    const again = await create({ name }, { key, parent: 2 });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await second.text());
    await expectProblem(await create({ name: `${name}-other` }, { key, parent: 2 }), 422, "IDEMPOTENCY_KEY_REUSED");
  });
});

describe("concurrent requests with one key", () => {
  it("run the route once: one 201, one 409 with Retry-After, then replays", async () => {
    const key = newKey();
    const name = uniqueName();
    const { hook, open, reached } = gate();
    hooks.push(hook);
    const runs = handlerRuns;

    const requests = [create({ name }, { key }), create({ name }, { key })];
    await reached;
    // While the winner waits inside the route, the other request has already been answered.
    const early = await Promise.race(requests);
    await expectProblem(early, 409, "IDEMPOTENCY_REQUEST_IN_PROGRESS");
    expect(early.headers.get("retry-after")).toBe("1");
    expect(handlerRuns - runs).toBe(1);

    open();
    const statuses = (await Promise.all(requests)).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    const winner = (await Promise.all(requests)).find((r) => r.status === 201)!;

    const retry = await create({ name }, { key });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(await winner.text());
    expect(handlerRuns - runs).toBe(1);
    expect(await materialRows(name)).toBe(1);
  });
});

describe("a failed request", () => {
  it("gives the key up after an error response, so the retry runs", async () => {
    const key = newKey();
    const name = uniqueName();
    hooks.push(async () => {
      throw new ApiError(409, { code: "PARENT_BUSY", detail: "Try again." });
    });
    const failed = await create({ name }, { key });
    await expectProblem(failed, 409, "PARENT_BUSY");
    // Token check, claim, release.
    expect(roundTrips(failed)).toBe(3);
    expect(await keyRows(key)).toEqual([]);

    const retry = await create({ name }, { key });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await materialRows(name)).toBe(1);
    expect((await create({ name }, { key })).headers.get("idempotent-replayed")).toBe("true");
  });

  it("gives the key up after an unexpected exception (500)", async () => {
    const key = newKey();
    const name = uniqueName();
    hooks.push(async () => {
      throw new Error("boom");
    });
    const logs = captureLogs();
    try {
      await expectProblem(await create({ name }, { key }), 500, "INTERNAL_ERROR");
    } finally {
      logs.restore();
    }
    expect(await keyRows(key)).toEqual([]);
    expect((await create({ name }, { key })).status).toBe(201);
  });

  it("gives the key up when validation refuses the body, and stores nothing", async () => {
    const key = newKey();
    const body = { name: uniqueName(), colour: "red" };
    await expectProblem(await create(body, { key }), 422, "VALIDATION_FAILED");
    expect(await keyRows(key)).toEqual([]);
    await expectProblem(await create(body, { key }), 422, "VALIDATION_FAILED");
  });
});

describe("a route that commits the key in its create's batch", () => {
  const committed = { route: "committed-children" } as const;

  it("costs no extra round trip, and replays the stored answer", async () => {
    const key = newKey();
    const name = uniqueName();
    const first = await create({ name }, { key, ...committed });
    expect(first.status).toBe(201);
    // Token check, claim, the insert with the commit, the stored answer.
    expect(roundTrips(first)).toBe(4);
    const retry = await create({ name }, { key, ...committed });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.text()).toBe(await first.text());
    expect(await materialRows(name)).toBe(1);
  });

  it("keeps the key when the request fails after its commit: the retry answers from the record instead of creating again", async () => {
    const key = newKey();
    const name = uniqueName();
    afterCommit.push(async () => {
      throw new Error("crash after the commit");
    });
    const logs = captureLogs();
    try {
      await expectProblem(await create({ name }, { key, ...committed }), 500, "INTERNAL_ERROR");
    } finally {
      logs.restore();
    }
    expect(await keyRows(key)).toEqual([expect.objectContaining({ resource_id: expect.any(Number), response_status: null })]);
    const runs = handlerRuns;

    const retry = await create({ name }, { key, ...committed });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    const [row] = await keyRows(key);
    expect(await retry.json()).toEqual({ id: row!.resource_id, name, parent_id: 1 });
    expect(retry.headers.get("location")).toBe(`/parents/1/children/${row!.resource_id}`);
    expect(handlerRuns).toBe(runs);
    expect(await materialRows(name)).toBe(1);
    await expectProblem(await create({ name: `${name}-other` }, { key, ...committed }), 422, "IDEMPOTENCY_KEY_REUSED");
  });

  it("answers 410 when the record made under the key is gone", async () => {
    const key = newKey();
    const name = uniqueName();
    afterCommit.push(async () => {
      throw new ApiError(503, { code: "UPSTREAM_DOWN", detail: "Cut off after the commit." });
    });
    await expectProblem(await create({ name }, { key, ...committed }), 503, "UPSTREAM_DOWN");
    await env.DB.prepare("DELETE FROM materials WHERE name LIKE ? || '#%'").bind(name).run();
    await expectProblem(await create({ name }, { key, ...committed }), 410, "IDEMPOTENCY_RECORD_GONE");
  });

  it("cannot commit once its lease was taken over: only the request that holds the key creates", async () => {
    const key = newKey();
    const name = uniqueName();
    const { hook, open, reached } = gate();
    hooks.push(hook);
    const stalled = create({ name }, { key, ...committed });
    await reached;
    // The first request stalls past its lease; a retry takes the key over and creates.
    await env.DB.prepare("UPDATE idempotency_keys SET expires_at = unixepoch() - 1 WHERE key = ?").bind(key).run();
    const retry = await create({ name }, { key, ...committed });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();

    open();
    const late = await stalled;
    await expectProblem(late, 409, "IDEMPOTENCY_REQUEST_IN_PROGRESS");
    expect(await materialRows(name)).toBe(1);
    const replay = await create({ name }, { key, ...committed });
    expect(await replay.text()).toBe(await retry.text());
  });
});

describe("the key itself", () => {
  it.each([
    ["empty", ""],
    ["too long", "k".repeat(129)],
    ["with a space", "my key"],
    ["with a tab", "my\tkey"],
  ])("is refused with 422 when %s, before any claim", async (_label, key) => {
    const name = uniqueName();
    const response = await create({ name }, { key });
    const problem = await expectProblem(response, 422, "VALIDATION_FAILED");
    expect(problem.errors).toEqual([{ pointer: "#/header/Idempotency-Key", detail: expect.any(String) }]);
    expect(roundTrips(response)).toBe(1);
    expect(await materialRows(name)).toBe(0);
  });

  it("may be 128 visible ASCII characters, quotes and punctuation included", async () => {
    const key = `"${"~!#$%&'()*+,-./:;<=>?@[\\]^_`{|}".padEnd(126, "z")}"`;
    expect(key).toHaveLength(128);
    const response = await create({ name: uniqueName() }, { key });
    expect(response.status).toBe(201);
    expect(await keyRows(key)).toHaveLength(1);
  });

  it("needs a signed-in user, even where the route forgot to authenticate", async () => {
    const response = await app.request("/unauthenticated", { method: "POST", headers: { "idempotency-key": newKey() } }, env);
    await expectProblem(response, 401, "AUTHENTICATION_REQUIRED");
  });

  it("is described in the OpenAPI document as an optional header", () => {
    const document = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "test", version: "1" } });
    const parameters = document.paths?.["/parents/{parent_id}/children"]?.post?.parameters ?? [];
    expect(parameters).toContainEqual(
      expect.objectContaining({
        name: "Idempotency-Key",
        in: "header",
        required: false,
        schema: expect.objectContaining({ type: "string" }),
      }),
    );
  });
});

describe("an unreachable store", () => {
  // A local D1 cannot be unplugged: the table is taken away (a real failure, not a mock) and
  // put back afterwards, as in auth-fail-closed.test.ts.
  async function withoutStore<T>(work: () => Promise<T>): Promise<T> {
    await env.DB.exec("ALTER TABLE idempotency_keys RENAME TO idempotency_keys_offline");
    try {
      return await work();
    } finally {
      await env.DB.exec("ALTER TABLE idempotency_keys_offline RENAME TO idempotency_keys");
    }
  }

  it("refuses a request with a key with 503 and Retry-After, without running it", async () => {
    const name = uniqueName();
    const logs = captureLogs();
    const runs = handlerRuns;
    try {
      await withoutStore(async () => {
        const response = await create({ name }, { key: newKey() });
        await expectProblem(response, 503, "IDEMPOTENCY_STORE_UNAVAILABLE");
        expect(response.headers.get("retry-after")).toBe("5");
        // Requests without a key do not depend on the store.
        expect((await create({ name })).status).toBe(201);
      });
    } finally {
      logs.restore();
    }
    expect(handlerRuns - runs).toBe(1);
    expect(await materialRows(name)).toBe(1);
    expect(logs.entries()).toContainEqual(expect.objectContaining({ level: "error", msg: "idempotency store unavailable" }));
  });
});
