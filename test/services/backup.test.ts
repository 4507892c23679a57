import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  backupFiles,
  countMismatches,
  countQuery,
  EXISTING_TABLES_QUERY,
  type Manifest,
  parseManifest,
  restorePlan,
  restoreStatements,
  tableText,
  verifyFile,
} from "../../scripts/backup/restore-core.mjs";
import worker from "../../src/index";
import { createLogger } from "../../src/lib/logger";
import { backupId, backupTime, pruneBackups, runBackupSlice } from "../../src/services/operations/backup";
import { buildServices } from "../../src/services/platform/build-services";
import { bearer, verifiedUser } from "../support/accounts";
import { api } from "../support/http";
import { enrolTotp } from "../support/mfa";
import { contributor, createProduct, keysUnder, referenceRow } from "../support/releases";

// The restore drill (docs/operations.md, Backups): data written through the API, a backup by the
// real Cron Trigger and queue, a fresh database, the restore with the code `npm run restore`
// uses (scripts/backup/restore-core.mjs), and every table identical, the read caches'
// generations included.

const BACKUP_CRON = "17 3 * * *";

/**
 * Every table of a database but D1's own, each as its rows' exact SQL literals in rowid order.
 * Full-text indexes are compared by the documents they hold (`documents`) and what they answer
 * (`searches`): the rest of their shadow tables is SQLite's internal layout, which a restore lays
 * out anew.
 */
async function dump(db: D1Database): Promise<Record<string, string[]>> {
  const tables = await db
    .prepare(
      "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND (name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR name = 'sqlite_sequence') ORDER BY name",
    )
    .all<{ name: string }>();
  const out: Record<string, string[]> = {};
  for (const { name } of tables.results) {
    const columns = await db.prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid").bind(name).all<{ name: string }>();
    const values = columns.results.map((c) => `quote("${c.name}")`).join(" || ',' || ");
    const rows = await db.prepare(`SELECT quote(rowid) || ':' || ${values} AS row FROM "${name}" ORDER BY rowid`).all<{ row: string }>();
    out[name] = rows.results.map((r) => r.row);
  }
  return out;
}

const INDEXES = ["products_fts", "products_trigram", "products_trigram_lower"];

/**
 * The documents each full-text index holds, exactly: its `_docsize` rows (the rowid of each and
 * its columns' token counts). Since migration 0024 they are the base products only.
 */
async function documents(db: D1Database) {
  const out: Record<string, string[]> = {};
  for (const index of INDEXES) {
    const rows = await db.prepare(`SELECT id || ':' || hex(sz) AS document FROM ${index}_docsize ORDER BY id`).all<{ document: string }>();
    out[index] = rows.results.map((row) => row.document);
  }
  return out;
}

/** What the full-text indexes find, after their own integrity checks. */
async function searches(db: D1Database) {
  const out: Record<string, number[]> = {};
  const terms = {
    products_fts: ["kettle", "radio", "lid OR dial", "hinge*", "quote"],
    products_trigram: ["ettl", "adi", "inge", '"K-30"'],
    // lower()ed values, case as is (migration 0027).
    products_trigram_lower: ['"k-30"', '"K-30"', "ettl"],
  };
  for (const [index, list] of Object.entries(terms)) {
    await db.prepare(`INSERT INTO ${index}(${index}) VALUES('integrity-check')`).run();
    for (const term of list) {
      const rows = await db.prepare(`SELECT rowid FROM ${index} WHERE ${index} MATCH ? ORDER BY rowid`).bind(term).all<{ rowid: number }>();
      out[`${index}: ${term}`] = rows.results.map((row) => row.rowid);
    }
  }
  return out;
}

async function schemaOf(db: D1Database) {
  const rows = await db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name")
    .all();
  return rows.results;
}

async function runStatus(id: string) {
  return env.DB.prepare("SELECT status, failure_reason, tables, rows, bytes FROM backup_runs WHERE id = ?")
    .bind(id)
    .first<{ status: string; failure_reason: string | null; tables: number; rows: number; bytes: number }>();
}

/** Reads a backup from the bucket and loads it into `target`, an empty database, as `npm run restore` does. */
async function restoreInto(target: D1Database, id: string): Promise<Manifest> {
  expect((await target.prepare(EXISTING_TABLES_QUERY).all()).results).toEqual([]);
  const manifestObject = await env.UPLOADS.get(`backups/${id}/manifest.json`);
  expect(manifestObject, "manifest.json").not.toBeNull();
  const manifest = parseManifest(await manifestObject!.text());
  const texts = new Map<string, string>();
  for (const file of backupFiles(manifest)) {
    const object = await env.UPLOADS.get(`backups/${id}/${file.file}`);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    await verifyFile(file, bytes);
    texts.set(file.name, await tableText(file, bytes));
  }
  const statements = restoreStatements(restorePlan(manifest, texts));
  await target.batch(statements.map((statement) => target.prepare(statement)));
  const counts = await target.prepare(countQuery(manifest)).first<Record<string, number>>();
  expect(countMismatches(manifest, counts!)).toEqual([]);
  return manifest;
}

/** Rows the API wrote: accounts (one with TOTP), reference rows, products with components and bills of materials, an edit and a deletion. */
async function writeThroughTheApi() {
  const ada = await contributor("drill-ada", true);
  await enrolTotp(ada.tokens.access_token, ada.password).then((enrolment) => enrolment);
  const steel = await referenceRow("materials", "Drill steel");
  const copper = await referenceRow("materials", "Drill copper");
  const kettles = await referenceRow("product_types", "Drill kettles");
  const bob = await verifiedUser("drill-bob");
  const bobProduct = await createProduct(bearer(bob.tokens.access_token), {
    name: "Radio; with a 'quote', \"double\" quotes and ');",
    weight_g: 0.1 + 0.2,
    description: "unicode ✓ — a line\nbreak;\nINSERT INTO users VALUES(1); and a tab\tseparated text",
    components: [{ name: "Dial", amount_in_parent: 2, bill_of_materials: [{ material_id: copper, quantity: 1e-7, unit: "g" }] }],
  });
  const kettle = (await createProduct(bearer(bob.tokens.access_token), {
    name: "Kettle",
    product_type_id: kettles,
    weight_g: 1250.5,
    circularity_properties: { recyclability: "Steel body" },
    bill_of_materials: [{ material_id: steel, quantity: 0.8, unit: "kg" }],
    components: [{ name: "Lid", amount_in_parent: 1, components: [{ name: "Hinge screw", amount_in_parent: 4 }] }],
  })) as unknown as { id: number; version: number };
  const edited = await api(`/v1/products/${kettle.id}`, {
    method: "PATCH",
    headers: { ...bearer(bob.tokens.access_token), "content-type": "application/json", "if-match": `"${kettle.version}"` },
    body: JSON.stringify({ model: "K-300" }),
  });
  expect(edited.status, await edited.clone().text()).toBe(200);
  const removed = await api(`/v1/components/${bobProduct.components[0]!.id}`, {
    method: "DELETE",
    headers: bearer(bob.tokens.access_token),
  });
  expect([200, 204]).toContain(removed.status);
}

describe("backup and restore drill", () => {
  it("backs every table up through the Cron Trigger and the queue, and restores it identical into an empty database", async () => {
    await writeThroughTheApi();
    const scheduledTime = Date.UTC(2026, 4, 1, 3, 17, 0);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime, cron: BACKUP_CRON }), env, ctx);
    await waitOnExecutionContext(ctx);
    const id = backupId(scheduledTime);
    expect(id).toBe("20260501T031700Z");
    // The real queue runs the slices meanwhile.
    const deadline = Date.now() + 30_000;
    let run = await runStatus(id);
    while (run?.status === "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = await runStatus(id);
    }
    expect(run, JSON.stringify(run)).toMatchObject({ status: "complete", failure_reason: null });

    const before = await dump(env.DB);
    const manifest = await restoreInto(env.RESTORE_DB, id);
    expect(manifest.read_generations?.changed).toBe(false);
    expect(run!.rows).toBe(manifest.tables.reduce((sum, t) => sum + t.rows, 0));

    const after = await dump(env.RESTORE_DB);
    // The runs of backups are the one table left out (its row would be half written).
    expect(after.backup_runs).toEqual([]);
    delete before.backup_runs;
    delete after.backup_runs;
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const table of Object.keys(before)) expect(after[table], table).toEqual(before[table]);
    // The caches' generations and the AUTOINCREMENT counters are rows like any other.
    expect(before.read_generations!.length).toBeGreaterThanOrEqual(2);
    expect(before.tree_generations!.length).toBeGreaterThan(0);
    expect(before.sqlite_sequence!.length).toBeGreaterThan(0);
    expect(await schemaOf(env.RESTORE_DB)).toEqual(await schemaOf(env.DB));
    // The indexes hold the base products only, the components left out (a rebuild would index
    // those too, and find "Lid", "Dial" and "Hinge screw"): the restored ones hold the same.
    const held = await documents(env.DB);
    const bases = await env.DB.prepare("SELECT id FROM products WHERE parent_id IS NULL ORDER BY id").all<{ id: number }>();
    const components = await env.DB.prepare("SELECT count(*) AS n FROM products WHERE parent_id IS NOT NULL").first<{ n: number }>();
    expect(components!.n).toBeGreaterThanOrEqual(2);
    for (const index of INDEXES) {
      expect(
        held[index]!.map((document) => Number(document.split(":")[0])),
        index,
      ).toEqual(bases.results.map((row) => row.id));
      expect(manifest.indexes.find((entry) => entry.name === index)?.rows, index).toBe(bases.results.length);
    }
    expect(manifest.indexes.map((entry) => entry.name).sort()).toEqual(INDEXES);
    expect(await documents(env.RESTORE_DB)).toEqual(held);
    const found = await searches(env.DB);
    expect(found["products_fts: kettle"]!.length).toBe(1);
    expect(found['products_trigram: "K-30"']!.length).toBe(1);
    expect(found['products_trigram_lower: "k-30"']).toEqual(found['products_trigram: "K-30"']);
    expect(found['products_trigram_lower: "K-30"']).toEqual([]);
    expect(found["products_fts: hinge*"]).toEqual([]);
    expect(found["products_fts: lid OR dial"]).toEqual([]);
    expect(found["products_trigram: inge"]).toEqual([]);
    expect(await searches(env.RESTORE_DB)).toEqual(found);
    // Triggers came back after the rows: a write to the restored database bumps the generation as before.
    const generation = await env.RESTORE_DB.prepare("SELECT generation FROM read_generations WHERE name = 'catalogue'").first();
    await env.RESTORE_DB.prepare("UPDATE products SET model = 'K-301' WHERE model = 'K-300'").run();
    expect(await env.RESTORE_DB.prepare("SELECT generation FROM read_generations WHERE name = 'catalogue'").first()).not.toEqual(
      generation,
    );
  }, 60_000);

  it("survives slices that stop mid-table and one that dies, and still restores identical", async () => {
    // 2,500 rows in one of the first tables the backup writes (it references none): three pages, so that slices stop inside it.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
       INSERT INTO product_types (name, description) SELECT 'type ' || i, 'a;b''c' || char(10) || i FROM n`,
    ).run();
    const id = backupId(Date.UTC(2026, 4, 2, 3, 17, 0));
    await env.DB.prepare("INSERT INTO backup_runs (id, status, started_at) VALUES (?, 'running', unixepoch())").bind(id).run();
    const svc = buildServices(env, { log: createLogger({ test: "backup" }) });
    const stateOf = async () =>
      JSON.parse((await env.DB.prepare("SELECT state FROM backup_runs WHERE id = ?").bind(id).first<{ state: string }>())!.state) as {
        plan: { tables: { name: string }[] };
        table: number;
        progress: { rows: number } | null;
      };
    const checkpoints: number[] = [];
    let dead = false;
    for (let slice = 0; slice < 10; slice++) {
      // A deadline already past: each slice does one unit of work (the plan, a table, or a page) and checkpoints.
      const outcome = await runBackupSlice(svc, id, Date.now() - 1);
      expect(outcome.kind, JSON.stringify(outcome)).toBe("continue");
      const state = await stateOf();
      const index = state.plan.tables.findIndex((t) => t.name === "product_types");
      expect(index).toBeLessThan(3);
      if (state.table > index) break;
      if (state.table === index && state.progress) checkpoints.push(state.progress.rows);
      if (!dead && state.progress?.rows === 2000) {
        // A slice that took the lease and died: its lease runs out and the next slice goes on from the checkpoint.
        await env.DB.prepare("UPDATE backup_runs SET lease_id = 'dead', lease_until = unixepoch() - 1 WHERE id = ?").bind(id).run();
        dead = true;
      }
    }
    expect(checkpoints).toEqual([1000, 2000]);
    expect(dead).toBe(true);
    // The rest in one slice.
    expect((await runBackupSlice(svc, id, Date.now() + 60_000)).kind).toBe("complete");
    const manifest = JSON.parse(await (await env.UPLOADS.get(`backups/${id}/manifest.json`))!.text()) as Manifest;
    const types = manifest.tables.find((t) => t.name === "product_types")!;
    expect(types.rows).toBeGreaterThanOrEqual(2500);
    // One gzip member per checkpoint, and the last.
    expect(types.members.length).toBe(3);
    // The checkpoints' tails are gone; only the files and the manifest remain.
    expect((await keysUnder(`backups/${id}/`)).filter((key) => key.includes("checkpoints/"))).toEqual([]);

    const before = await dump(env.DB);
    await restoreInto(env.RESTORE_DB_2, id);
    const after = await dump(env.RESTORE_DB_2);
    delete before.backup_runs;
    delete after.backup_runs;
    for (const table of Object.keys(before)) expect(after[table], table).toEqual(before[table]);
    expect(await documents(env.RESTORE_DB_2)).toEqual(await documents(env.DB));
  }, 60_000);

  it("refuses, as a failed run, a full-text index it cannot restore to hold the same rows", async () => {
    const svc = buildServices(env, { log: createLogger({ test: "backup" }) });
    const cases = [
      // No list of its documents: only a rebuild could fill it, and that indexes every product.
      ["drill_sizeless", "USING fts5(name, content='products', content_rowid='id', columnsize=0)", /drill_sizeless.*columnsize=0/],
      // Its own copy of the text (no content table): the backup copies none.
      ["drill_contentless", "USING fts5(name, content='')", /drill_contentless.*no content= table/],
      // Over a table the backup leaves out.
      ["drill_runs", "USING fts5(status, content=backup_runs)", /drill_runs indexes backup_runs, which is neither/],
      // A view of the terms of an index the schema does not hold (one of an FTS5 index it holds is made again from the schema).
      ["drill_terms", "USING fts5vocab(no_such_index, 'instance')", /drill_terms \(module fts5vocab\) holds its own data/],
    ] as const;
    for (const [name, declaration, reason] of cases) {
      await env.DB.prepare(`CREATE VIRTUAL TABLE ${name} ${declaration}`).run();
      const id = backupId(Date.UTC(2026, 4, 3, 3, 17, 0));
      await env.DB.prepare("INSERT INTO backup_runs (id, status, started_at) VALUES (?, 'running', unixepoch())").bind(id).run();
      try {
        const outcome = await runBackupSlice(svc, id, Date.now() + 60_000);
        expect(outcome.kind, name).toBe("failed");
        expect(outcome.kind === "failed" && outcome.reason, name).toMatch(reason);
        expect(await runStatus(id)).toMatchObject({ status: "failed" });
        expect(await keysUnder(`backups/${id}/`)).toEqual([]);
      } finally {
        await env.DB.batch([env.DB.prepare(`DROP TABLE ${name}`), env.DB.prepare("DELETE FROM backup_runs WHERE id = ?").bind(id)]);
      }
    }
  });

  it("keeps BACKUP_RETENTION_DAYS of backups: older ones go once a newer one completes", async () => {
    const day = 86_400_000;
    const now = Date.UTC(2026, 5, 30, 3, 17, 0);
    const ids = [now - 31 * day, now - 29 * day, now].map(backupId);
    for (const id of ids) await env.UPLOADS.put(`backups/${id}/manifest.json`, "{}");
    await env.UPLOADS.put("backups/not-a-backup/manifest.json", "{}");
    const svc = buildServices({ ...env, BACKUP_RETENTION_DAYS: "30" }, { log: createLogger({}) });
    const pruned = await pruneBackups(svc, ids[2]!);
    expect(pruned).toContain(ids[0]);
    expect(pruned).not.toContain(ids[1]);
    expect(pruned).not.toContain(ids[2]);
    const left = await keysUnder("backups/");
    expect(left).toContain(`backups/${ids[1]}/manifest.json`);
    expect(left).toContain("backups/not-a-backup/manifest.json");
    expect(left).not.toContain(`backups/${ids[0]}/manifest.json`);
    expect(backupTime("20260230T000000Z")).toBeNull();
  });
});
