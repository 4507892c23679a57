import { UnsupportedPathError } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { TrieRouter } from "hono/router/trie-router";
import { describe, expect, it } from "vitest";
import { RememberingRouter } from "../../../src/lib/router";

// The shapes of the app's table: middleware on wildcards, a fixed segment beside a parameter.
const ROUTES: [string, string][] = [
  ["ALL", "*"],
  ["ALL", "/v1/*"],
  ["GET", "/live"],
  ["GET", "/v1/products/facets"],
  ["GET", "/v1/products/:id"],
  ["GET", "/v1/products/:id/components/tree"],
  ["POST", "/v1/oauth/:provider/associate/authorize"],
  ["GET", "/v1/oauth/associations"],
  ["GET", "/v1/releases/:version/files/:path{.+}"],
];

function routers() {
  const remembering = new RememberingRouter<string>();
  const trie = new TrieRouter<string>();
  for (const [method, path] of ROUTES) {
    remembering.add(method, path, `${method} ${path}`);
    trie.add(method, path, `${method} ${path}`);
  }
  return { remembering, trie };
}

describe("RememberingRouter", () => {
  it.each([
    ["GET", "/live"],
    ["GET", "/v1/products/facets"],
    ["GET", "/v1/products/42"],
    ["GET", "/v1/products/42/components/tree"],
    ["POST", "/v1/oauth/github/associate/authorize"],
    ["GET", "/v1/oauth/associations"],
    ["GET", "/v1/releases/2026.1/files/a/b.csv"],
    ["GET", "/nowhere"],
    ["DELETE", "/v1/products/42"],
  ])("matches %s %s as Hono's TrieRouter does, the first time and again", (method, path) => {
    const { remembering, trie } = routers();
    const expected = trie.match(method, path);
    const first = remembering.match(method, path);
    expect(first).toEqual(expected);
    expect(remembering.match(method, path)).toBe(first);
  });

  it("keeps the latest 512 matches, letting the oldest go", () => {
    const { remembering } = routers();
    const first = remembering.match("GET", "/v1/products/0");
    for (let id = 1; id < 512; id++) remembering.match("GET", `/v1/products/${id}`);
    expect(remembering.match("GET", "/v1/products/0")).toBe(first);
    remembering.match("GET", "/v1/products/512");
    const again = remembering.match("GET", "/v1/products/0");
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("refuses a route added after the first match, as Hono's default router does", () => {
    const { remembering } = routers();
    remembering.match("GET", "/live");
    expect(() => remembering.add("GET", "/later", "later")).toThrow(/already built/);
  });

  // Why the app does not run on Hono's default (RegExpRouter first): it refuses this table.
  it("stands in for a RegExpRouter that refuses a fixed segment beside a parameter", () => {
    const regExp = new RegExpRouter<string>();
    expect(() => {
      for (const [method, path] of ROUTES) regExp.add(method, path, path);
      regExp.match("GET", "/live");
    }).toThrow(UnsupportedPathError);
  });
});
