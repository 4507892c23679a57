import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger";
import { QUALITY_CHECK_CODES } from "../../src/lib/record-quality";
import { buildServices } from "../../src/services/platform/build-services";
import { qualitySummary } from "../../src/services/releases/metadata";

// The README's quality summary is summed over the staged records a chunk at a time (one statement
// over all of them held D1 for 7.8 s at 300,000 base products): the chunks must add up to the
// whole, whatever the chunk size and the gaps between ids.

describe("the release README's quality summary", () => {
  it("adds up to the same counts in chunks of any size as in one", async () => {
    const version = "9.9";
    await env.DB.prepare(
      "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES (?, 'Summary', 'CC-BY-4.0', 'building', 'http://localhost', 'summary-build')",
    )
      .bind(version)
      .run();
    // 23 records with ids 3, 10, 17, ... and each check passing, failing or not applying by turns.
    const values = (i: number) => QUALITY_CHECK_CODES.map((_, c) => ((i + c) % 3 === 0 ? "NULL" : String((i * (c + 1)) % 2))).join(", ");
    const rows = Array.from({ length: 23 }, (_, i) => {
      const id = 3 + 7 * i;
      return `('${version}', ${id}, 1, 'Record ${id}', 1, 1, ${values(i)})`;
    });
    const columns = QUALITY_CHECK_CODES.map((code) => `check_${code}`).join(", ");
    await env.DB.prepare(
      `INSERT INTO release_records (release_version, id, owner_id, name, created_at, updated_at, ${columns}) VALUES ${rows.join(", ")}`,
    ).run();
    const db = buildServices(env, { log: createLogger({ test: "quality-summary" }) }).db;

    const whole = await qualitySummary(db, version);
    expect(whole.records).toBe(23);
    for (const [c, code] of QUALITY_CHECK_CODES.entries()) {
      const outcomes = Array.from({ length: 23 }, (_, i) => ((i + c) % 3 === 0 ? null : (i * (c + 1)) % 2));
      expect(whole.checks[c]).toEqual({
        code,
        pass: outcomes.filter((o) => o === 1).length,
        fail: outcomes.filter((o) => o === 0).length,
        notApplicable: outcomes.filter((o) => o === null).length,
      });
    }
    for (const chunk of [1, 2, 5, 22, 23, 24]) expect(await qualitySummary(db, version, chunk)).toEqual(whole);
  });
});
