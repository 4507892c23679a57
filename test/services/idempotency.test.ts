import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { batchRows, createDb } from "../../src/db/client";
import type { HeldKey } from "../../src/lib/idempotency-key";
import {
  type ClaimInput,
  claimKey,
  commitStatements,
  IDEMPOTENCY_LEASE_SECONDS,
  IDEMPOTENCY_TTL_SECONDS,
  isKeyLost,
  releaseKey,
  sha256Hex,
  storeResponse,
} from "../../src/services/platform/idempotency";

let sequence = 0;

/** A user row of its own, so that keys never collide across tests (storage is per file). */
async function seedUser(): Promise<number> {
  const n = `${Date.now().toString(36)}${(sequence++).toString(36)}`;
  const row = await env.DB.prepare("INSERT INTO users (email, email_canonical, username) VALUES (?, ?, ?) RETURNING id")
    .bind(`idem.${n}@example.org`, `idem.${n}@example.org`, `idem_${n}`)
    .first<{ id: number }>();
  return row!.id;
}

const NOW = 1_900_000_000;

async function request(overrides: Partial<ClaimInput> = {}): Promise<ClaimInput> {
  return {
    userId: overrides.userId ?? (await seedUser()),
    key: "key-1",
    scope: "POST /v1/products",
    target: "POST /v1/products",
    bodyHash: await sha256Hex(new TextEncoder().encode('{"name":"Kettle"}')),
    now: NOW,
    ...overrides,
  };
}

const CREATED = {
  status: 201,
  body: '{"id":7,"name":"Kettle"}',
  headers: { "Content-Type": "application/json", Location: "/v1/products/7", ETag: '"1"' },
};

async function rowsFor(userId: number) {
  const { results } = await env.DB.prepare("SELECT * FROM idempotency_keys WHERE user_id = ?").bind(userId).all();
  return results;
}

describe("sha256Hex", () => {
  it("is the lower-case hex SHA-256 of the bytes", async () => {
    expect(await sha256Hex(new TextEncoder().encode("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await sha256Hex(new ArrayBuffer(0))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});

describe("claimKey", () => {
  it("claims a new key with an in-flight marker, in one round trip", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const input = await request();
    const result = await claimKey({ db }, input);
    expect(result).toEqual({
      kind: "claimed",
      held: { userId: input.userId, scope: "POST /v1/products", key: "key-1", claim: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
    expect(roundTrips.count).toBe(1);
    expect(await rowsFor(input.userId)).toEqual([
      {
        user_id: input.userId,
        scope: "POST /v1/products",
        key: "key-1",
        target: "POST /v1/products",
        body_hash: input.bodyHash,
        claim: (result as { held: HeldKey }).held.claim,
        resource_id: null,
        response_status: null,
        response_body: null,
        response_headers: null,
        created_at: NOW,
        expires_at: NOW + IDEMPOTENCY_LEASE_SECONDS,
      },
    ]);
  });

  it("reports a running request as in progress", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    await claimKey({ db }, input);
    expect(await claimKey({ db }, { ...input, now: NOW + 1 })).toEqual({ kind: "in-progress" });
  });

  it("replays a stored response for the same request, in one round trip", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);
    expect(await storeResponse({ db }, claimed.held, CREATED, NOW + 2)).toBe(true);

    const before = roundTrips.count;
    expect(await claimKey({ db }, { ...input, now: NOW + 10 })).toEqual({ kind: "replay", ...CREATED });
    expect(roundTrips.count - before).toBe(1);
    const [row] = await rowsFor(input.userId);
    expect(row).toMatchObject({ response_status: 201, expires_at: NOW + 2 + IDEMPOTENCY_TTL_SECONDS });
  });

  it("refuses the key on its path with another body or query string, running or finished", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);
    const others: Partial<ClaimInput>[] = [
      { bodyHash: await sha256Hex(new TextEncoder().encode('{"name":"Kettle" }')) },
      { target: "POST /v1/products?x=1" },
    ];
    for (const other of others) expect(await claimKey({ db }, { ...input, ...other })).toEqual({ kind: "mismatch" });

    await storeResponse({ db }, claimed.held, CREATED, NOW);
    for (const other of others) expect(await claimKey({ db }, { ...input, ...other })).toEqual({ kind: "mismatch" });
    // The refusals changed nothing: the original still replays.
    expect((await claimKey({ db }, input)).kind).toBe("replay");
  });

  it("keeps keys apart per user", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    await claimKey({ db }, input);
    const other = await request();
    expect((await claimKey({ db }, other)).kind).toBe("claimed");
    expect((await claimKey({ db }, { ...other, userId: input.userId, bodyHash: "0".repeat(64) })).kind).toBe("mismatch");
  });

  it("keeps keys apart per method and path: the same key elsewhere is another key", async () => {
    const { db } = createDb(env.DB);
    const input = await request({ scope: "POST /v1/products/8/components", target: "POST /v1/products/8/components" });
    const first = await claimKey({ db }, input);
    if (first.kind !== "claimed") throw new Error(first.kind);
    await storeResponse({ db }, first.held, CREATED, NOW);
    for (const scope of ["POST /v1/products/9/components", "POST /v1/components/8/components", "PUT /v1/products/8/components"]) {
      expect((await claimKey({ db }, { ...input, scope, target: scope })).kind, scope).toBe("claimed");
    }
    expect((await claimKey({ db }, input)).kind).toBe("replay");
    expect(await rowsFor(input.userId)).toHaveLength(4);
  });

  it("treats an expired response as absent and claims the key again, whatever the new request", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const first = await claimKey({ db }, input);
    if (first.kind !== "claimed") throw new Error(first.kind);
    await storeResponse({ db }, first.held, CREATED, NOW);

    const expiry = NOW + IDEMPOTENCY_TTL_SECONDS;
    expect((await claimKey({ db }, { ...input, now: expiry - 1 })).kind).toBe("replay");
    const again = await claimKey({ db }, { ...input, target: "POST /v1/products?x=1", now: expiry });
    if (again.kind !== "claimed") throw new Error(again.kind);
    expect(again.held.claim).not.toBe(first.held.claim);
    const rows = await rowsFor(input.userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      target: "POST /v1/products?x=1",
      claim: again.held.claim,
      expires_at: expiry + IDEMPOTENCY_LEASE_SECONDS,
      response_status: null,
      response_body: null,
      response_headers: null,
      created_at: expiry,
    });
  });

  it("lets a retry take over a marker whose lease ran out; the old holder can then neither store nor release", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const stale = await claimKey({ db }, input);
    if (stale.kind !== "claimed") throw new Error(stale.kind);

    const leaseEnd = NOW + IDEMPOTENCY_LEASE_SECONDS;
    expect((await claimKey({ db }, { ...input, now: leaseEnd - 1 })).kind).toBe("in-progress");
    const fresh = await claimKey({ db }, { ...input, now: leaseEnd });
    if (fresh.kind !== "claimed") throw new Error(fresh.kind);

    expect(await storeResponse({ db }, stale.held, CREATED, leaseEnd + 1)).toBe(false);
    expect(await releaseKey({ db }, stale.held)).toBe(false);
    expect((await claimKey({ db }, { ...input, now: leaseEnd + 1 })).kind).toBe("in-progress");

    expect(await storeResponse({ db }, fresh.held, CREATED, leaseEnd + 2)).toBe(true);
    expect((await claimKey({ db }, { ...input, now: leaseEnd + 3 })).kind).toBe("replay");
  });

  it("gives exactly one of ten concurrent claimers the key", async () => {
    const input = await request();
    // Ten clients, each with its own database client, as ten isolates would have.
    const results = await Promise.all(Array.from({ length: 10 }, () => claimKey({ db: createDb(env.DB).db }, input)));
    expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "in-progress")).toHaveLength(9);
    expect(await rowsFor(input.userId)).toHaveLength(1);
  });

  it("gives exactly one of ten concurrent claimers an expired key", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const first = await claimKey({ db }, input);
    if (first.kind !== "claimed") throw new Error(first.kind);
    await storeResponse({ db }, first.held, CREATED, NOW);

    const later = { ...input, now: NOW + IDEMPOTENCY_TTL_SECONDS + 5 };
    const results = await Promise.all(Array.from({ length: 10 }, () => claimKey({ db: createDb(env.DB).db }, later)));
    expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "in-progress")).toHaveLength(9);
  });

  it("sweeps expired rows of other users as it goes", async () => {
    const { db } = createDb(env.DB);
    // Older than every other row of this file, so it is first in line for the sweep.
    const old = await request({ key: "old-key", now: NOW - 10 * IDEMPOTENCY_TTL_SECONDS });
    await claimKey({ db }, old);
    expect(await rowsFor(old.userId)).toHaveLength(1);
    // Long after that marker's lease, another user's claim removes it.
    await claimKey({ db }, await request());
    expect(await rowsFor(old.userId)).toEqual([]);
  });
});

describe("storeResponse and releaseKey", () => {
  it("releases a held key so that the same request can claim it again", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);

    const before = roundTrips.count;
    expect(await releaseKey({ db }, claimed.held)).toBe(true);
    expect(roundTrips.count - before).toBe(1);
    expect(await rowsFor(input.userId)).toEqual([]);
    expect((await claimKey({ db }, input)).kind).toBe("claimed");
  });

  it("stores in one round trip and never releases or overwrites a stored response", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);

    const before = roundTrips.count;
    expect(await storeResponse({ db }, claimed.held, CREATED, NOW)).toBe(true);
    expect(roundTrips.count - before).toBe(1);
    expect(await releaseKey({ db }, claimed.held)).toBe(false);
    expect(await storeResponse({ db }, claimed.held, { ...CREATED, body: "{}" }, NOW)).toBe(false);
    expect(await claimKey({ db }, input)).toEqual({ kind: "replay", ...CREATED });
  });

  it("replays a response stored without headers or body", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);
    await storeResponse({ db }, claimed.held, { status: 204, body: "", headers: {} }, NOW);
    expect(await claimKey({ db }, input)).toEqual({ kind: "replay", status: 204, body: "", headers: {} });
  });
});

describe("commitStatements", () => {
  /** A create of its own: one material row, the key committed with its id in the same batch. */
  async function createUnder(held: HeldKey, name: string, now = NOW, made?: ReturnType<typeof sql>) {
    const { db, roundTrips } = createDb(env.DB);
    const id = sql`(SELECT id FROM materials WHERE name = ${name})`;
    await batchRows(db, [sql`INSERT INTO materials (name) VALUES (${name})`, ...commitStatements(held, id, now, made)]);
    return roundTrips.count;
  }

  const materials = async (name: string) =>
    (await env.DB.prepare("SELECT id FROM materials WHERE name = ?").bind(name).all<{ id: number }>()).results;

  it("mark the key committed with the record's id in the create's own batch; a retry is told so until the answer is stored", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);
    const name = `commit-${crypto.randomUUID()}`;
    expect(await createUnder(claimed.held, name)).toBe(1);
    const [material] = await materials(name);

    expect(await claimKey({ db }, { ...input, now: NOW + 1 })).toEqual({ kind: "committed", resourceId: material!.id });
    // A failure after the commit does not give the key up: a retry must not create again.
    expect(await releaseKey({ db }, claimed.held)).toBe(false);
    const [row] = await rowsFor(input.userId);
    expect(row).toMatchObject({ resource_id: material!.id, response_status: null, expires_at: NOW + IDEMPOTENCY_TTL_SECONDS });
    // Another body under the key is still refused; the stored answer replaces the committed state.
    expect((await claimKey({ db }, { ...input, bodyHash: "0".repeat(64) })).kind).toBe("mismatch");
    expect(await storeResponse({ db }, claimed.held, CREATED, NOW + 1)).toBe(true);
    expect(await claimKey({ db }, { ...input, now: NOW + 2 })).toEqual({ kind: "replay", ...CREATED });
  });

  it("fail the whole create when the key was taken over after its lease, so only the new holder creates", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const stale = await claimKey({ db }, input);
    if (stale.kind !== "claimed") throw new Error(stale.kind);
    const fresh = await claimKey({ db }, { ...input, now: NOW + IDEMPOTENCY_LEASE_SECONDS });
    if (fresh.kind !== "claimed") throw new Error(fresh.kind);

    const late = `late-${crypto.randomUUID()}`;
    const error = await createUnder(stale.held, late).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isKeyLost(error)).toBe(true);
    expect(await materials(late)).toEqual([]);
    expect((await claimKey({ db }, { ...input, now: NOW + IDEMPOTENCY_LEASE_SECONDS + 1 })).kind).toBe("in-progress");

    const current = `current-${crypto.randomUUID()}`;
    await createUnder(fresh.held, current, NOW + IDEMPOTENCY_LEASE_SECONDS + 1);
    expect(await materials(current)).toHaveLength(1);
  });

  it("fail the create when the key's expired marker was swept away meanwhile", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);
    await env.DB.prepare("DELETE FROM idempotency_keys WHERE user_id = ?").bind(input.userId).run();
    const name = `swept-${crypto.randomUUID()}`;
    const error = await createUnder(claimed.held, name).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isKeyLost(error)).toBe(true);
    expect(await materials(name)).toEqual([]);
    expect(await rowsFor(input.userId)).toEqual([]);
  });

  it("leave the key running when the create made nothing, so that it is released", async () => {
    const { db } = createDb(env.DB);
    const input = await request();
    const claimed = await claimKey({ db }, input);
    if (claimed.kind !== "claimed") throw new Error(claimed.kind);
    await createUnder(claimed.held, `nothing-${crypto.randomUUID()}`, NOW, sql`0`);
    expect((await claimKey({ db }, { ...input, now: NOW + 1 })).kind).toBe("in-progress");
    expect(await releaseKey({ db }, claimed.held)).toBe(true);
    expect(await rowsFor(input.userId)).toEqual([]);
  });
});

describe("isKeyLost", () => {
  it("recognises only the guard's failure", () => {
    expect(isKeyLost(new Error("D1_ERROR: NOT NULL constraint failed: idempotency_keys.claim: SQLITE_CONSTRAINT"))).toBe(true);
    expect(isKeyLost(new Error("D1_ERROR: NOT NULL constraint failed: products.name: SQLITE_CONSTRAINT"))).toBe(false);
    expect(isKeyLost(undefined)).toBe(false);
  });
});
