// The local D1 database (and R2 bucket) of a wrangler state folder, reached from Node through a
// Miniflare worker of our own over HTTP. `wrangler d1 execute --local` and Miniflare's binding
// proxies hand the whole request to a worker thread at once and stop at a few hundred MB (a
// 30,000-product restore is 150 MB of SQL); a plain request streams. The database is the one
// wrangler uses for the binding: without a database_id in wrangler.jsonc, it is named by the
// binding (DB).
import path from "node:path";
import { Miniflare } from "miniflare";

const WORKER = `
export default {
  async fetch(request, env) {
    const { op, sql, statements } = await request.json();
    try {
      if (op === "all") return Response.json((await env.DB.prepare(sql).all()).results);
      if (op === "batch") {
        const results = await env.DB.batch(statements.map((s) => env.DB.prepare(s)));
        return Response.json(results.length);
      }
      if (op === "object") {
        const object = await env.BUCKET.get(sql);
        return object === null ? new Response(null, { status: 404 }) : new Response(object.body);
      }
      return new Response("unknown op", { status: 400 });
    } catch (error) {
      return Response.json({ error: String(error?.message ?? error) }, { status: 500 });
    }
  },
};`;

/**
 * Opens the D1 database of binding `binding` (and, with `bucket`, that R2 bucket as well) in the
 * state folder `persistTo` (what `wrangler --persist-to` names; default .wrangler/state).
 * Returns `{ all(sql), batch(statements), object(key), dispose() }`.
 */
export async function openLocalState(persistTo, { binding = "DB", bucket = null } = {}) {
  const root = path.resolve(persistTo);
  const mf = new Miniflare({
    modules: true,
    script: WORKER,
    compatibilityDate: "2026-04-26",
    d1Databases: { DB: binding },
    d1Persist: path.join(root, "v3", "d1"),
    ...(bucket ? { r2Buckets: { BUCKET: bucket }, r2Persist: path.join(root, "v3", "r2") } : {}),
  });
  await mf.ready;
  const call = async (body) => {
    const response = await mf.dispatchFetch("http://local/", { method: "POST", body: JSON.stringify(body) });
    if (response.status === 404) return null;
    if (!response.ok) throw new Error((await response.json().catch(() => null))?.error ?? `local D1 answered ${response.status}`);
    return response;
  };
  return {
    all: async (sql) => (await call({ op: "all", sql })).json(),
    /** Runs the statements as one D1 batch: one transaction, all or nothing. */
    batch: async (statements) => (await call({ op: "batch", statements })).json(),
    object: async (key) => {
      const response = await call({ op: "object", sql: key });
      return response === null ? null : Buffer.from(await response.arrayBuffer());
    },
    dispose: () => mf.dispose(),
  };
}
