// Scenarios measured against the app worker. Add one by appending to the list:
//
//   {
//     name: "unique-name",          // used in the table, the JSON and `--only`
//     method: "GET",                // any HTTP method
//     path: "/v1/...",              // path and query string
//     headers: { ... },             // optional request headers
//     body: "..." | object,         // optional; an object is sent as JSON
//     seed: async (ctx) => {...},   // optional, see below
//   }
//
// `seed(ctx)` runs once after the migrations and the bootstrap warm-up request, before any load,
// only when its scenario is selected. ctx = { db, fetch, url, bootstrap }:
//   db        - the app's D1 database (mf.getD1Database("DB")); use db.prepare(...).run() / db.batch()
//   fetch     - (path, init?) => Promise<Response> against the app worker (for API-driven setup)
//   url       - the app's base URL
//   bootstrap - { email, password } of the bootstrap superuser
// A seed may return { path?, headers?, body? } to override the scenario's request, e.g. the id
// of a row it created or an Authorization header it obtained by logging in.
// Every response of a scenario must be a 2xx; anything else flags the scenario as failed.

export const scenarios = [
  { name: "live", method: "GET", path: "/live" },
  { name: "units", method: "GET", path: "/v1/units" },
];
