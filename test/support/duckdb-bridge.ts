import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * Not an upstream: DuckDB (native, Node only) for the Workers tests, behind the host the fake
 * upstream answers for it (`https://duckdb.test/query`). A test posts files it read from the Worker
 * (a release's Parquet and CSV files, say) and a query naming them as `{dir}/<name>`; the files are
 * written to a fresh temporary folder, DuckDB's own readers run the query there, and the rows come
 * back as JSON (DuckDB's JSON form: big integers and decimals as strings). The folder is removed
 * afterwards. So a file the Worker serves is read by an independent reader in the same test.
 */
export interface DuckDbQuery {
  /** File name to its bytes, base64. */
  files: Record<string, string>;
  /** SQL with `{dir}` where the folder of the files goes. */
  sql: string;
}

export async function duckdbQuery(query: DuckDbQuery): Promise<{ status: number; body: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "duckdb-bridge-"));
  try {
    for (const [name, base64] of Object.entries(query.files)) {
      if (!/^[A-Za-z0-9._-]+$/.test(name)) return { status: 400, body: `bad file name ${name}` };
      await writeFile(path.join(dir, name), Buffer.from(base64, "base64"));
    }
    // Loaded on first use: the test configuration that imports the fake upstream stays light.
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(query.sql.replaceAll("{dir}", dir.replaceAll("'", "''")));
      return { status: 200, body: JSON.stringify(reader.getRowObjectsJson()) };
    } catch (error) {
      return { status: 422, body: String((error as Error)?.message ?? error) };
    } finally {
      connection.closeSync();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
