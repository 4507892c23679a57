import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toHex } from "../../../src/lib/encoding.ts";
import { ResumableSha256 } from "../../../src/lib/release/resumable-sha256.ts";
import { sha256Hex } from "./support.ts";

describe("ResumableSha256", () => {
  it("saved between blocks and restored elsewhere, gives the one-shot digest", () => {
    const data = randomBytes(64 * 1000 + 17);
    for (const cut of [0, 64, 64 * 999, 64 * 1000]) {
      const first = new ResumableSha256().update(data.subarray(0, cut));
      const state = JSON.parse(JSON.stringify(first.save()));
      expect(state.bytes).toBe(cut);
      expect(state.chain).toMatch(/^[0-9a-f]{64}$/);
      const second = ResumableSha256.restore(state).update(data.subarray(cut));
      expect(toHex(second.digest())).toBe(sha256Hex(data));
    }
  });

  it("saves nothing in the middle of a block, and refuses a state that is not one", () => {
    expect(() => new ResumableSha256().update(new Uint8Array(65)).save()).toThrow("whole 64-byte blocks");
    const chain = "0".repeat(64);
    expect(() => ResumableSha256.restore({ bytes: 65, chain })).toThrow("not a SHA-256 state");
    expect(() => ResumableSha256.restore({ bytes: 64, chain: "X".repeat(64) })).toThrow("not a SHA-256 state");
    expect(() => ResumableSha256.restore({ bytes: -64, chain })).toThrow("not a SHA-256 state");
  });

  it("starts from SHA-256's initial words", () => {
    // FIPS 180-4 §5.3.3: the initial hash value H(0).
    expect(new ResumableSha256().save()).toEqual({
      bytes: 0,
      chain: "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19",
    });
  });
});
