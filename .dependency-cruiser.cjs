// The layer rules of the Worker (docs/architecture.md), checked by `npm run check:layers` (part of
// `npm test`). Type-only imports count: a circle of types still ties the files together.

// The rate limiter lives in one folder, src/rate-limits/, whose files take the roles below: its
// policy table and leases are helpers (lib), its client and failure budgets services, and its
// middleware and Durable Object what their names say.
/** Services, the core's, each plugin's and the rate limiter's. */
const SERVICES = ["^src/services/", "^src/plugins/[^/]+/services/", "^src/rate-limits/(client|failure-budgets)\\.ts$"];
/** Helpers and types with no domain state. */
const LIB = ["^src/lib/", "^src/rate-limits/(policy|leases)\\.ts$"];
/** Middleware, the core's folder and the rate limiter's. */
const MIDDLEWARE = ["^src/middleware/", "^src/rate-limits/middleware\\.ts$"];
/** Routes, the core's and each plugin's. */
const ROUTES = ["^src/routes/", "^src/plugins/[^/]+/routes/"];
/** Durable Object classes, the core's and each plugin's (the plugin's name is $1). */
const DURABLE_OBJECTS = "^(?:src/rate-limits/object\\.ts$|src/plugins/([^/]+)/durable-objects/)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import circle in src/, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "services-not-to-routes-or-hono",
      comment: "Services are plain functions over the container: nothing from the routes, nothing of Hono.",
      severity: "error",
      from: { path: SERVICES },
      to: { path: [...ROUTES, ...MIDDLEWARE, "^node_modules/(hono|@hono/)"] },
    },
    {
      name: "lib-not-to-services-or-routes",
      comment: "src/lib is helpers and types: it imports neither services nor routes (nor any plugin).",
      severity: "error",
      from: { path: LIB },
      to: { path: [...SERVICES, ...ROUTES, ...MIDDLEWARE, "^src/plugins/"] },
    },
    {
      name: "core-not-to-plugins",
      comment: "The core never imports a plugin; only src/app.ts and src/index.ts (through src/plugins/installed.ts) know them.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/plugins/", "^src/app\\.ts$", "^src/index\\.ts$"] },
      to: { path: "^src/plugins/" },
    },
    {
      name: "plugins-not-to-each-other",
      comment: "A plugin imports the core, never another plugin.",
      severity: "error",
      from: { path: "^src/plugins/([^/]+)/" },
      to: { path: "^src/plugins/", pathNot: ["^src/plugins/$1/"] },
    },
    {
      name: "plugins-not-to-core-routes",
      comment:
        "A plugin builds on the core's services and its shared API shapes (src/schemas/), never on a core route file: the core's routes may change without a plugin noticing.",
      severity: "error",
      from: { path: "^src/plugins/" },
      to: { path: "^src/routes/" },
    },
    {
      name: "shared-schemas-not-to-routes",
      comment: "src/schemas/ holds the API shapes core routes and plugins share: it imports no route or middleware, so both may import it.",
      severity: "error",
      from: { path: "^src/schemas/" },
      to: { path: [...ROUTES, ...MIDDLEWARE] },
    },
    {
      name: "durable-objects-services-through-the-container",
      comment:
        "A Durable Object reaches services only through the container: of src/services it imports the factory alone (platform/build-services.ts), and of a plugin's services only its own plugin's, which take the container it built.",
      severity: "error",
      from: { path: DURABLE_OBJECTS },
      to: {
        path: ["^src/services/", "^src/plugins/[^/]+/services/"],
        pathNot: ["^src/services/platform/build-services\\.ts$", "^src/plugins/$1/services/"],
      },
    },
    {
      name: "durable-objects-not-to-routes",
      comment: "Durable Objects serve the Worker; they import no route or middleware.",
      severity: "error",
      from: { path: DURABLE_OBJECTS },
      to: { path: [...ROUTES, ...MIDDLEWARE] },
    },
    {
      name: "env-not-to-services",
      comment: "src/env.ts (Hono's variables) imports no service; the container's contract is enough.",
      severity: "error",
      from: { path: "^src/env\\.ts$" },
      to: { path: SERVICES },
    },
    {
      name: "container-not-to-services",
      comment: "src/container.ts is the contract: it imports no service, so that anything may import it.",
      severity: "error",
      from: { path: "^src/container\\.ts$" },
      to: { path: [...SERVICES, ...ROUTES, ...MIDDLEWARE] },
    },
    {
      name: "auth-not-to-hono",
      comment: "src/auth decides who may do what without knowing HTTP (the request-bound guards are src/middleware/guards.ts).",
      severity: "error",
      from: { path: "^src/auth/" },
      to: { path: ["^node_modules/(hono|@hono/)", ...ROUTES, ...MIDDLEWARE] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: ["^src/", "^node_modules/(hono|@hono)/"],
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
