import { describe, expect, it } from "vitest";
import { createMethodLookup } from "../../../src/lib/route-matcher";

describe("createMethodLookup", () => {
  const lookup = createMethodLookup([
    { method: "ALL", path: "/*" },
    { method: "GET", path: "/v1/products" },
    { method: "POST", path: "/v1/products" },
    { method: "GET", path: "/v1/products/:id" },
    { method: "PATCH", path: "/v1/products/:id" },
    { method: "GET", path: "/v1/things/:id{[0-9]+}" },
    { method: "GET", path: "/files/*" },
    { method: "DELETE", path: "/v1/tags/:name?" },
    { method: "GET", path: "/" },
  ]);

  it.each([
    ["/v1/products", ["GET", "HEAD", "POST"]],
    ["/v1/products/", []],
    ["/v1/products/12", ["GET", "HEAD", "PATCH"]],
    ["/v1/products/12/extra", []],
    ["/v1/things/12", ["GET", "HEAD"]],
    ["/v1/things/abc", []],
    ["/files/a/b/c", ["GET", "HEAD"]],
    ["/unknown", []],
    ["/v1/tags", ["DELETE"]],
    ["/v1/tags/red", ["DELETE"]],
    ["/v1/tags/red/more", []],
    ["/", ["GET", "HEAD"]],
  ])("%s supports %j (middleware entries do not count)", (path, methods) => {
    expect(lookup(path)).toEqual(methods);
  });
});
