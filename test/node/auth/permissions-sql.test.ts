import { type SQL, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import initSqlJs, { type Database } from "sql.js";
import { beforeAll, describe, expect, it } from "vitest";
import { assertMayModify, mayModify, mayModifySql, maySeeUnsettled, ownedBySql, type WriteIntent } from "../../../src/auth/permissions.ts";
import type { SessionUser } from "../../../src/auth/session-user.ts";
import { ApiError } from "../../../src/lib/problem.ts";
import { VERIFIED_CONTRIBUTOR } from "./session-user-fixture";

// The write rule is written twice on purpose, once for records read first (TypeScript) and once
// for conditional writes (SQL); these cases hold the two to the same answers, against SQLite.

const base: SessionUser = VERIFIED_CONTRIBUTOR;
const USERS: Record<string, SessionUser> = {
  owner: base,
  stranger: { ...base, id: 8 },
  "superuser without TOTP": { ...base, id: 1, isSuperuser: true, role: "lab" },
  "superuser with TOTP": { ...base, id: 1, isSuperuser: true, role: "lab", totpEnabled: true },
  "TOTP without superuser": { ...base, id: 9, totpEnabled: true },
};
const INTENTS: WriteIntent[] = ["correct", "add"];
const OWNER_ID = base.id;

let db: Database;
const dialect = new SQLiteSyncDialect();

beforeAll(async () => {
  const SQL = await initSqlJs();
  db = new SQL.Database();
  db.run("CREATE TABLE records (id INTEGER PRIMARY KEY, owner_id INTEGER NOT NULL)");
  db.run("INSERT INTO records (id, owner_id) VALUES (1, ?)", [OWNER_ID]);
});

/** Whether the fragment holds for the record owned by OWNER_ID, as SQLite evaluates it. */
function holds(condition: SQL): boolean {
  const query = dialect.sqlToQuery(sql`SELECT count(*) AS n FROM records r WHERE r.id = 1 AND ${condition}`);
  const result = db.exec(query.sql, query.params as (string | number | null)[]);
  return result[0]!.values[0]![0] === 1;
}

const missing = () => new ApiError(404, { code: "PRODUCT_NOT_FOUND", detail: "No such product." });
const allowedByAssert = (user: SessionUser, intent: WriteIntent) => {
  try {
    assertMayModify(user, { ownerId: OWNER_ID }, missing, intent);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
    return false;
  }
};

describe("the write rule in TypeScript and in SQL", () => {
  const cases = Object.entries(USERS).flatMap(([who, user]) => INTENTS.map((intent) => [who, intent, user] as const));

  it.each(cases)("agree for the %s, intent %s", (_who, intent, user) => {
    const expected = mayModify(user, OWNER_ID, intent);
    expect(allowedByAssert(user, intent)).toBe(expected);
    expect(holds(mayModifySql(user, sql.raw("r.owner_id"), intent))).toBe(expected);
  });

  it("is the spec's: owners do anything, superusers with TOTP correct but never add, nobody else", () => {
    expect(INTENTS.map((intent) => mayModify(USERS.owner!, OWNER_ID, intent))).toEqual([true, true]);
    expect(INTENTS.map((intent) => mayModify(USERS["superuser with TOTP"]!, OWNER_ID, intent))).toEqual([true, false]);
    for (const who of ["stranger", "superuser without TOTP", "TOTP without superuser"]) {
      expect(INTENTS.map((intent) => mayModify(USERS[who]!, OWNER_ID, intent))).toEqual([false, false]);
    }
  });

  it("owner-only access (add, private records) holds for the owner alone, superusers included", () => {
    for (const [who, user] of Object.entries(USERS)) {
      expect(holds(ownedBySql(user.id, sql.raw("r.owner_id"))), who).toBe(who === "owner");
      expect(holds(ownedBySql(user.id, sql.raw("r.owner_id")))).toBe(holds(mayModifySql(user, sql.raw("r.owner_id"), "add")));
    }
  });

  it("unsettled media is seen by whoever may correct the record, never by an anonymous viewer", () => {
    expect(maySeeUnsettled(null, OWNER_ID)).toBe(false);
    for (const user of Object.values(USERS)) {
      expect(maySeeUnsettled(user, OWNER_ID)).toBe(holds(mayModifySql(user, sql.raw("r.owner_id"), "correct")));
    }
  });
});
