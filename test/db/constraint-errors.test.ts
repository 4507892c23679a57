import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { constraintError, constraintFailure, isConstraintFailure } from "../../src/db/constraint-errors";

// The errors are D1's own, raised by real statements against the local database, both straight
// from the binding and through drizzle (which wraps them as `cause`).

async function failure(statement: string): Promise<unknown> {
  try {
    await env.DB.prepare(statement).run();
  } catch (error) {
    return error;
  }
  throw new Error(`no error from: ${statement}`);
}

async function ownerId(): Promise<number> {
  await env.DB.prepare(
    "INSERT OR IGNORE INTO users (email, email_canonical, username, hashed_password, created_at, updated_at) VALUES ('c@example.org', 'c@example.org', 'constraint_owner', 'x', 0, 0)",
  ).run();
  return (await env.DB.prepare("SELECT id FROM users WHERE username = 'constraint_owner'").first<{ id: number }>())!.id;
}

describe("isConstraintFailure", () => {
  it("matches the kind, and the constraint, column, column list or table the failure names", async () => {
    const owner = await ownerId();
    const check = await failure(`INSERT INTO products (owner_id, name, created_at, updated_at) VALUES (${owner}, 'a', 0, 0)`);
    expect(isConstraintFailure(check, "CHECK")).toBe(true);
    expect(isConstraintFailure(check, "CHECK", "products_name_length")).toBe(true);
    expect(isConstraintFailure(check, "CHECK", "products")).toBe(false);
    expect(isConstraintFailure(check, ["UNIQUE", "NOT NULL"])).toBe(false);
    await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Matched steel')").run();
    const unique = await failure("INSERT INTO materials (name) VALUES ('Matched steel')");
    expect(isConstraintFailure(unique, "UNIQUE", "materials.name")).toBe(true);
    expect(isConstraintFailure(unique, "UNIQUE", "materials")).toBe(true);
    expect(isConstraintFailure(unique, "UNIQUE", "materials.id")).toBe(false);
    expect(isConstraintFailure(unique, "UNIQUE", "material")).toBe(false);
    expect(isConstraintFailure(new Error("not a constraint"), "UNIQUE")).toBe(false);
    // Through drizzle, which wraps D1's error as `cause`.
    const wrapped = new Error("Failed query", { cause: unique });
    expect(isConstraintFailure(wrapped, ["FOREIGN KEY", "UNIQUE"], "materials.name")).toBe(true);
  });
});

describe("constraintFailure", () => {
  it("reads each kind of constraint failure D1 reports, with what it names", async () => {
    const owner = await ownerId();
    const insert = (name: string) => `INSERT INTO products (owner_id, name, created_at, updated_at) VALUES (${owner}, ${name}, 0, 0)`;
    expect(constraintFailure(await failure(insert("'a'")))).toEqual({ kind: "CHECK", target: "products_name_length" });
    expect(constraintFailure(await failure(insert("NULL")))).toEqual({ kind: "NOT NULL", target: "products.name" });
    await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Constraint steel')").run();
    expect(constraintFailure(await failure("INSERT INTO materials (name) VALUES ('Constraint steel')"))).toEqual({
      kind: "UNIQUE",
      target: "materials.name",
    });
    expect(
      constraintFailure(await failure("INSERT INTO products (owner_id, name, created_at, updated_at) VALUES (999999, 'Orphan', 0, 0)")),
    ).toEqual({
      kind: "FOREIGN KEY",
      target: "",
    });
  });

  it("finds the failure behind drizzle's query error, and nothing in other errors", async () => {
    const { db } = createDb(env.DB);
    let wrapped: unknown;
    try {
      await db.run(sql`INSERT INTO materials (name, description) VALUES (NULL, 'x')`);
    } catch (error) {
      wrapped = error;
    }
    expect(constraintFailure(wrapped)).toEqual({ kind: "NOT NULL", target: "materials.name" });
    expect(constraintFailure(await failure("SELECT * FROM no_such_table"))).toBeNull();
    expect(constraintFailure(new Error("CHECK constraint failed"))).toEqual({ kind: "CHECK", target: "" });
    expect(constraintFailure("UNIQUE constraint failed: users.email")).toBeNull();
  });
});

describe("constraintError", () => {
  it("is 409 for uniqueness, with the member columns it names", () => {
    const error = constraintError({ kind: "UNIQUE", target: "taxonomies.name, taxonomies.version" });
    expect([error.status, error.code]).toEqual([409, "ALREADY_EXISTS"]);
    expect(error.errors?.map((e) => e.pointer)).toEqual(["/name", "/version"]);
    expect(constraintError({ kind: "UNIQUE", target: "products.id" }).errors).toBeUndefined();
  });

  it("is 422 otherwise, at the guarded member when known and at the whole body when not", () => {
    const pointer = (failure: Parameters<typeof constraintError>[0]) => {
      const error = constraintError(failure);
      expect([error.status, error.code]).toEqual([422, "VALIDATION_FAILED"]);
      return error.errors?.map((e) => e.pointer);
    };
    expect(pointer({ kind: "CHECK", target: "products_name_length" })).toEqual(["/name"]);
    expect(pointer({ kind: "CHECK", target: "bill_of_materials_quantity" })).toEqual(["/quantity"]);
    expect(pointer({ kind: "CHECK", target: "images_status" })).toEqual([""]);
    expect(pointer({ kind: "NOT NULL", target: "products.name" })).toEqual(["/name"]);
    expect(pointer({ kind: "NOT NULL", target: "products.owner_id" })).toEqual([""]);
    expect(pointer({ kind: "FOREIGN KEY", target: "" })).toEqual([""]);
  });
});
