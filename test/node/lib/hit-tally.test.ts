import { describe, expect, it } from "vitest";
import { HitTally } from "../../../src/lib/hit-tally";

// When cached reads stop looking for copies (src/middleware/read-copies.ts): only after a full
// window of lookups that almost never found one, never entirely (probes), and back as soon as
// probes find copies again.

/** How many of `n` requests would look for a copy, each lookup recorded with `hit`. */
function looks(tally: HitTally, n: number, hit: (i: number) => boolean): number {
  let looked = 0;
  for (let i = 0; i < n; i++) {
    if (!tally.worthLooking()) continue;
    looked += 1;
    tally.record(hit(looked));
  }
  return looked;
}

describe("HitTally", () => {
  it("looks every time while learning and while copies are found", () => {
    const tally = new HitTally(64, 16, 16);
    expect(looks(tally, 63, () => false)).toBe(63);
    // One hit in eight: well above one in sixteen.
    const paying = new HitTally(64, 16, 16);
    expect(looks(paying, 1_000, (i) => i % 8 === 0)).toBe(1_000);
  });

  it("looks only every sixteenth time once a window of lookups found (almost) nothing", () => {
    const tally = new HitTally(64, 16, 16);
    expect(looks(tally, 64, () => false)).toBe(64);
    expect(looks(tally, 1_600, () => false)).toBe(100);
    // One hit in twenty is still below the share.
    const rare = new HitTally(64, 16, 16);
    expect(looks(rare, 64, (i) => i % 20 === 0)).toBe(64);
    expect(looks(rare, 1_600, (i) => i % 20 === 0)).toBe(100);
  });

  it("looks every time again once the probes find copies", () => {
    const tally = new HitTally(64, 16, 16);
    looks(tally, 64, () => false);
    expect(tally.worthLooking()).toBe(false);
    // Every probe hits: the share climbs past one in sixteen within a few probes.
    let probes = 0;
    for (let i = 0; i < 10_000 && probes < 50; i++) {
      if (!tally.worthLooking()) continue;
      probes += 1;
      tally.record(true);
    }
    expect(looks(tally, 100, () => true)).toBe(100);
  });
});
