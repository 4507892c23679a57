import { z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { fieldErrors, pointerFor } from "../../../src/lib/validation";

describe("pointerFor", () => {
  it.each([
    ["json", ["a", 0, "b"], "/a/0/b"],
    ["json", [], ""],
    ["json", ["x/y", "m~n"], "/x~1y/m~0n"],
    ["query", ["size"], "#/query/size"],
    ["param", ["id"], "#/path/id"],
    ["header", ["if-match"], "#/header/if-match"],
  ] as const)("%s %j -> %s", (target, path, pointer) => {
    expect(pointerFor(target, path)).toBe(pointer);
  });
});

describe("fieldErrors", () => {
  it("names nested members, required members and each unknown member", () => {
    const schema = z.strictObject({
      name: z.string().min(2),
      parts: z.array(z.strictObject({ amount: z.number().int().min(1) })),
    });
    const result = schema.safeParse({ parts: [{ amount: 0 }, { amount: 1, owner_id: 3 }], role: "lab" });
    expect(result.success).toBe(false);
    const errors = fieldErrors("json", result.error!.issues);
    expect(errors).toEqual(
      expect.arrayContaining([
        { pointer: "/name", detail: "This member is required." },
        { pointer: "/parts/0/amount", detail: expect.stringContaining("1") },
        { pointer: "/parts/1/owner_id", detail: "Unknown or read-only member; it cannot be set here." },
        { pointer: "/role", detail: "Unknown or read-only member; it cannot be set here." },
      ]),
    );
    expect(errors).toHaveLength(4);
  });
});
