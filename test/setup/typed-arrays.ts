import { expect } from "vitest";

// `toEqual` walks a typed array as an object: every index becomes a string key and is compared on
// its own, which made byte-for-byte image comparisons (megapixel rasters, whole JPEGs) the costliest
// assertions of the suite. Two typed arrays of one kind are compared as memory instead; on a
// mismatch vitest still prints its diff. Anything else falls through to vitest's own comparison.
function sameTypedArrays(a: unknown, b: unknown): boolean | undefined {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a instanceof DataView || b instanceof DataView) return undefined;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return undefined;
  const x = a as unknown as ArrayLike<number | bigint>;
  const y = b as unknown as ArrayLike<number | bigint>;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) return false;
  return true;
}

// Files that share a worker run this setup each time: the tester is added once per worker.
const ADDED = Symbol.for("relab.typed-array-tester");
if (!(globalThis as Record<symbol, unknown>)[ADDED]) {
  (globalThis as Record<symbol, unknown>)[ADDED] = true;
  expect.addEqualityTesters([sameTypedArrays]);
}
