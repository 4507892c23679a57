import { it } from "vitest";
import { decodePngScaled } from "../../../src/lib/images/png-decode-scaled";
import { buildPng } from "../../support/image-fixtures-raster";

it("perf noise", async () => {
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  const png = await buildPng({ width: 3000, height: 2000, colorType: 2, depth: 8, sample: () => [rnd(), rnd(), rnd()], filter: () => 0 });
  const t0 = Date.now();
  const out = await decodePngScaled(png, 800);
  console.log("NOISE", png.length, out.width, out.height, Date.now() - t0, (globalThis as any).__reads, (globalThis as any).__starved);
}, 120000);
