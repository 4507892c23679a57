// Scenarios measured against the app worker. Add one by appending to the list:
//
//   {
//     name: "unique-name",          // used in the table, the JSON and `--only`
//     method: "GET",                // any HTTP method
//     path: "/v1/...",              // path and query string
//     headers: { ... },             // optional request headers
//     body: "..." | object,         // optional; an object is sent as JSON
//     expectStatus: 400,            // optional: the one status every response must have (default: any 2xx)
//     vary: (i) => ({ headers?, body? }), // optional: what request i changes (e.g. a different account per request)
//     instance: "no-limits",        // optional: which app instance serves it (default "app"), see INSTANCES in run.mjs
//     addresses: NEW_CLIENT_POOL,   // optional: its own client-address pool (a size from 10.0.0.0, or { first, size, unique }); default --addresses
//     users: 32,                    // optional: how many accounts its requests rotate over (vary), for the per-user limit check (default 1)
//     seed: async (ctx) => {...},   // optional, see below
//   }
//
// Every request to the app comes from a client address of a pool (load.mjs), as `CF-Connecting-IP`
// from Cloudflare's edge: the per-IP rate limits then see many clients at a bounded rate each, as
// real traffic looks, not one client at hundreds per second (which they would refuse with 429).
// By default the pool is `--addresses` (256: 10.0.0.0–10.0.0.255, round robin), "steady clients"
// the limiter already knows; a scenario's `addresses` replaces it (NEW_CLIENT_POOL: a never-seen
// address per request, 10.1.0.0 up). `vary(i)` is applied on top, with the same i; i counts the
// scenario's requests over all its runs (warm-up and rounds), from 0.
//
// `seed(ctx)` runs once after the migrations and the bootstrap warm-up request, before any load,
// only when its scenario is selected. ctx = { db, fetch, url, bootstrap }:
//   db        - the app's D1 database (mf.getD1Database("DB")); use db.prepare(...).run() / db.batch()
//   fetch     - (path, init?) => Promise<Response> against the app worker (for API-driven setup)
//   url       - the app's base URL
//   bootstrap - { email, password } of the bootstrap superuser
// A seed may return { path?, headers?, body?, vary? } to override the scenario's request, e.g. the
// id of a row it created or an Authorization header it obtained by logging in. It runs against the
// scenario's own instance (ctx.db and ctx.fetch are that instance's).
// Every response of a scenario must be a 2xx, or exactly `expectStatus` when it is set (a scenario
// that measures an error path); anything else flags the scenario as failed. A seed that sets up
// an error path should also check, once, that the error is the intended one (its body's code):
// under load only the status is checked.

import { NEW_CLIENT_POOL } from "./load.mjs";

/** The account the login scenarios sign in to; the password obeys the registration rules. */
export const LOGIN_ACCOUNT = { email: "bench.login@example.org", username: "bench_login", password: "violet-kettle-47-orbit" };

// One registration per app instance, shared by the login scenarios' seeds (whichever runs first).
const registrations = new Map();

/**
 * Registers LOGIN_ACCOUNT through the real API (POST /v1/auth/register: policy checks, Argon2id
 * hash, INSERT, verification email to the dev outbox). Its breached-password check calls
 * api.pwnedpasswords.com, which fails open after its timeout when unreachable: ~1.5 s here.
 */
function registerLoginAccount({ fetch, url }) {
  if (!registrations.has(url)) {
    registrations.set(
      url,
      (async () => {
        const response = await fetch("/v1/auth/register", {
          method: "POST",
          headers: { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" },
          body: JSON.stringify(LOGIN_ACCOUNT),
        });
        const text = await response.text();
        if (response.status !== 201) throw new Error(`seed: POST /v1/auth/register answered ${response.status}: ${text.slice(0, 300)}`);
      })(),
    );
  }
  return registrations.get(url);
}

/**
 * Accounts that are copies of LOGIN_ACCOUNT (same password hash, so the same password signs in),
 * for the login scenarios: the failed-login budget allows 3 attempts in flight or failed per
 * account per minute (always on, even with RATE_LIMITS_ENABLED=false), so one account can neither
 * take a wrong password at tens per second nor 10 concurrent logins. Pool account n is
 * `bench.pool.<n>@example.org`; `login` and `login-wrong-password` both go round it.
 *
 * Size: account n is used by requests n, n + N, n + 2N, ... (round robin over the pool), so its
 * 4th failure comes 3N requests after its 1st; at R failed logins per second, sustained, that is
 * 3N / R seconds. It stays out of a 60 s window while 3N / R >= 60, i.e. R <= N / 20: with
 * N = 2048 up to ~100 failed logins/s, against ~25/s measured here (bench/README.md). And the
 * scenario only runs 5 s of every ~50 s round: a default run (1 s warm-up + 3 × 5 s) sends ~430
 * requests, so no account is used twice at all.
 */
export const ACCOUNT_POOL = 2048;
export const poolEmail = (n) => `bench.pool.${n}@example.org`;

const pools = new Map();

/**
 * Inserts ACCOUNT_POOL copies of the registered LOGIN_ACCOUNT row in one statement: a recursive
 * CTE yields n = 0..N-1, each row gets its own email, email_canonical and username (the three
 * unique indexes of users, migrations/0000_init.sql) and every other column but the id from the
 * registered row (columns read from the table, so later migrations are copied too).
 */
function seedAccountPool(ctx) {
  if (!pools.has(ctx.url)) {
    pools.set(
      ctx.url,
      (async () => {
        await registerLoginAccount(ctx);
        const { results } = await ctx.db.prepare("SELECT name FROM pragma_table_info('users')").all();
        const copied = results.map((r) => r.name).filter((c) => !["id", "email", "email_canonical", "username"].includes(c));
        const cols = copied.map((c) => `"${c}"`).join(", ");
        const result = await ctx.db
          .prepare(
            `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?1)
         INSERT INTO users (email, email_canonical, username, ${cols})
         SELECT 'bench.pool.' || seq.n || '@example.org', 'bench.pool.' || seq.n || '@example.org', 'bench_pool_' || seq.n, ${copied.map((c) => `u."${c}"`).join(", ")}
         FROM seq, users AS u WHERE u.email_canonical = ?2`,
          )
          .bind(ACCOUNT_POOL, LOGIN_ACCOUNT.email)
          .run();
        if (result.meta.changes !== ACCOUNT_POOL)
          throw new Error(`seed: account pool inserted ${result.meta.changes} rows, expected ${ACCOUNT_POOL}`);
      })(),
    );
  }
  return pools.get(ctx.url);
}

/** Unknown emails for login-unknown: a new one per request, so no budget is hit twice. */
const UNKNOWN_EMAILS = 1_000_000;

/** Seeds a failed-login scenario: checks once that the request is refused as LOGIN_BAD_CREDENTIALS, not for some other reason. */
async function expectBadCredentials({ fetch }, body) {
  const response = await fetch("/v1/auth/bearer/login", {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 400 || !text.includes('"LOGIN_BAD_CREDENTIALS"')) {
    throw new Error(`seed: a failed login answered ${response.status}, expected 400 LOGIN_BAD_CREDENTIALS: ${text.slice(0, 300)}`);
  }
}

const WRONG_PASSWORD = "wrong-kettle-47-orbit";

// ---------------------------------------------------------------------------------------------
// Products (issue 5): detail, filtered list, a 1,000-component tree, a create with 50 nested
// components. One shared seed per app instance (seedProducts), then each scenario checks its own
// request once (status and shape) before any load.

/** The account the products seed registers through the API; its copies create the products. */
export const PRODUCTS_ACCOUNT = { email: "bench.products@example.org", username: "bench_products", password: "amber-lantern-58-quartz" };

/**
 * Verified accounts that send `product-create`, round robin (request i: account i mod N), each
 * with its own bearer token. A signed-in write counts in `write-user` (600/min per user) and not
 * in the per-IP buckets, so one account would be refused after 600 creates in a minute; N
 * accounts allow 10 N creates/s sustained (320/s), several times what a 50-component create
 * does here (bench/README.md, Products). Their logins come from 127.0.0.1 in the seed: 48 of
 * `login-ip`'s 60 a minute (the failed-login seeds add 2).
 */
export const PRODUCT_USERS = 64;

/**
 * The client addresses of the anonymous product reads: answered by the fast lane, a quiet machine
 * serves them fast enough that 256 addresses went over read-ip (300/min), and the bench refused
 * the comparison (the same reason the signed-in read has 64 accounts).
 */
const PRODUCT_ADDRESSES = 512;
export const productUserEmail = (n) => `bench.products.${n}@example.org`;

/** Base products the list scenario filters: LIST_PRODUCTS over LIST_BRANDS, round robin (250 per brand). */
export const LIST_PRODUCTS = 2000;
export const LIST_BRANDS = ["fairphone", "nokia", "krups", "bosch", "philips", "lenovo", "dell", "miele"];
/** The brand `product-list` filters on: 1/8 of the seeded products, 5 pages of the default 50. */
export const LIST_BRAND = LIST_BRANDS[0];

/** The tree: 10 top-level components with 99 components each, 1,000 in all (the route's maximum, and one create body's). */
const TREE_TOP = 10;
const TREE_CHILDREN = 99;
export const TREE_COMPONENTS = TREE_TOP * (1 + TREE_CHILDREN);

/** Materials the bills of materials name (ids 1..5 on a fresh database; read back by name). */
const MATERIALS = ["Bench steel", "Bench aluminium", "Bench ABS", "Bench copper", "Bench glass"];

const SEED_HEADERS = { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" };

/** The create body of `product-create`: a base product, 10 components with 4 each (50 components), bills of materials on 11 records. */
function createBody(materialIds) {
  return {
    name: "Bench create",
    brand: "bench-create",
    model: "C-50",
    weight_g: 1250,
    bill_of_materials: [
      { material_id: materialIds[0], quantity: 0.8, unit: "kg" },
      { material_id: materialIds[2], quantity: 0.2, unit: "kg" },
    ],
    components: Array.from({ length: 10 }, (_, i) => ({
      name: `Module ${i}`,
      amount_in_parent: 1 + i,
      weight_g: 100,
      bill_of_materials: [{ material_id: materialIds[i % materialIds.length], quantity: 50, unit: "g" }],
      components: Array.from({ length: 4 }, (_, j) => ({ name: `Part ${i}.${j}`, amount_in_parent: 1 + j })),
    })),
  };
}
export const CREATE_COMPONENTS = 50;

async function json(response, what, expectStatus) {
  const text = await response.text();
  if (response.status !== expectStatus)
    throw new Error(`seed: ${what} answered ${response.status}, expected ${expectStatus}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

const productUserSeeds = new Map();
const productSeeds = new Map();

/**
 * The accounts and materials of the products scenarios, once per app instance:
 * PRODUCTS_ACCOUNT registered through POST /v1/auth/register (~1.5 s: the breached-password check
 * fails open offline), marked verified with SQL, copied PRODUCT_USERS times (like the login pool:
 * same password hash, own email/username), each copy logged in through POST /v1/auth/bearer/login
 * for an access token (they live 15 minutes; a default run takes ~4); then MATERIALS, by SQL.
 */
function seedProductUsers(ctx) {
  if (!productUserSeeds.has(ctx.url)) productUserSeeds.set(ctx.url, doSeedProductUsers(ctx));
  return productUserSeeds.get(ctx.url);
}

/**
 * The read scenarios' data, once per app instance, after seedProductUsers:
 *  1. one product type, by SQL;
 *  2. LIST_PRODUCTS base products by SQL (one INSERT ... SELECT over a recursive CTE; created_at
 *     one second apart so `-created_at` has an order to follow), then `id_blocks.next_id` moved
 *     past them: the create route reserves explicit ids from there;
 *  3. through the API: the detail product (type, bill of materials of 3, 1 video, 10 direct
 *     components, each with a bill of materials) and the tree product (TREE_COMPONENTS components).
 */
function seedProducts(ctx) {
  if (!productSeeds.has(ctx.url)) productSeeds.set(ctx.url, doSeedProducts(ctx));
  return productSeeds.get(ctx.url);
}

async function doSeedProductUsers({ db, fetch }) {
  await json(
    await fetch("/v1/auth/register", { method: "POST", headers: SEED_HEADERS, body: JSON.stringify(PRODUCTS_ACCOUNT) }),
    "POST /v1/auth/register",
    201,
  );
  const verified = await db.prepare("UPDATE users SET is_verified = 1 WHERE email = ?").bind(PRODUCTS_ACCOUNT.email).run();
  if (verified.meta.changes !== 1)
    throw new Error(`seed: marking ${PRODUCTS_ACCOUNT.email} verified changed ${verified.meta.changes} rows`);
  const { results: columns } = await db.prepare("SELECT name FROM pragma_table_info('users')").all();
  const copied = columns.map((r) => r.name).filter((c) => !["id", "email", "email_canonical", "username"].includes(c));
  const pool = await db
    .prepare(
      `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?1)
     INSERT INTO users (email, email_canonical, username, ${copied.map((c) => `"${c}"`).join(", ")})
     SELECT 'bench.products.' || seq.n || '@example.org', 'bench.products.' || seq.n || '@example.org', 'bench_products_' || seq.n, ${copied.map((c) => `u."${c}"`).join(", ")}
     FROM seq, users AS u WHERE u.email_canonical = ?2`,
    )
    .bind(PRODUCT_USERS, PRODUCTS_ACCOUNT.email)
    .run();
  // Counted, not taken from meta.changes: local D1 counts the rows the users triggers write too.
  const pooled = await db.prepare("SELECT count(*) AS n FROM users WHERE username LIKE 'bench\\_products\\_%' ESCAPE '\\'").first();
  if (pooled.n !== PRODUCT_USERS)
    throw new Error(`seed: product user pool holds ${pooled.n} accounts (${pool.meta.changes} rows changed), expected ${PRODUCT_USERS}`);
  const tokens = [];
  for (let n = 0; n < PRODUCT_USERS; n++) {
    const login = await json(
      await fetch("/v1/auth/bearer/login", {
        method: "POST",
        // An address per account: login-ip allows 60 sign-ins a minute from one address.
        headers: { ...SEED_HEADERS, "cf-connecting-ip": `127.0.1.${n}` },
        body: JSON.stringify({ username: productUserEmail(n), password: PRODUCTS_ACCOUNT.password }),
      }),
      `bearer login of ${productUserEmail(n)}`,
      200,
    );
    if (typeof login.access_token !== "string") throw new Error(`seed: bearer login of ${productUserEmail(n)} returned no access_token`);
    tokens.push(login.access_token);
  }
  await db.batch(MATERIALS.map((name) => db.prepare("INSERT INTO materials (name) VALUES (?)").bind(name)));
  const { results: materialRows } = await db
    .prepare(`SELECT id FROM materials WHERE name IN (${MATERIALS.map(() => "?").join(", ")}) ORDER BY id`)
    .bind(...MATERIALS)
    .all();
  return { tokens, materialIds: materialRows.map((r) => r.id) };
}

async function doSeedProducts(ctx) {
  const { db, fetch } = ctx;
  const { tokens, materialIds } = await seedProductUsers(ctx);
  const owner = await db.prepare("SELECT id FROM users WHERE email = ?").bind(productUserEmail(0)).first();
  const type = await db.prepare("INSERT INTO product_types (name) VALUES ('Bench appliance') RETURNING id").first();

  const brands = LIST_BRANDS.map((b) => `'${b}'`).join(", ");
  const list = await db
    .prepare(
      `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?1)
     INSERT INTO products (owner_id, name, brand, model, weight_g, created_at, updated_at)
     SELECT ?2, 'Bench product ' || n, json_extract(json_array(${brands}), '$[' || (n % ${LIST_BRANDS.length}) || ']'),
            'M-' || n, 100 + n, unixepoch() - ?1 + n, unixepoch() - ?1 + n
     FROM seq`,
    )
    .bind(LIST_PRODUCTS, owner.id)
    .run();
  // meta.changes also counts the rows the full-text triggers write, so count the products.
  const listed = await db.prepare("SELECT count(*) AS n FROM products WHERE parent_id IS NULL").first();
  if (!list.success || listed.n !== LIST_PRODUCTS)
    throw new Error(`seed: ${listed.n} base products after the list insert, expected ${LIST_PRODUCTS}`);
  await db.prepare("UPDATE id_blocks SET next_id = (SELECT max(id) + 1 FROM products) WHERE name = 'products'").run();

  const auth = { ...SEED_HEADERS, authorization: `Bearer ${tokens[0]}` };
  const detail = await json(
    await fetch("/v1/products", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        name: "Bench coffee grinder",
        description: "The detail scenario's product.",
        brand: "Krups",
        model: "GVX2",
        weight_g: 1450,
        height_cm: 25,
        width_cm: 14,
        depth_cm: 18,
        product_type_id: type.id,
        circularity_properties: { recyclability: "Housing is PP, clip-fit.", disassemblability: null, remanufacturability: null },
        bill_of_materials: materialIds.slice(0, 3).map((material_id, i) => ({ material_id, quantity: 0.1 * (i + 1), unit: "kg" })),
        videos: [{ url: "https://www.youtube.com/watch?v=bench", title: "Teardown" }],
        components: Array.from({ length: 10 }, (_, i) => ({
          name: `Grinder part ${i}`,
          amount_in_parent: 1 + i,
          weight_g: 20 + i,
          bill_of_materials: [{ material_id: materialIds[i % materialIds.length], quantity: 5, unit: "g" }],
        })),
      }),
    }),
    "POST /v1/products (detail product)",
    201,
  );
  const tree = await json(
    await fetch("/v1/products", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        name: "Bench tree product",
        components: Array.from({ length: TREE_TOP }, (_, i) => ({
          name: `Assembly ${i}`,
          amount_in_parent: 1,
          components: Array.from({ length: TREE_CHILDREN }, (_, j) => ({ name: `Part ${i}.${j}`, amount_in_parent: 1 + (j % 10) })),
        })),
      }),
    }),
    "POST /v1/products (tree product, 1,000 components)",
    201,
  );
  return { detailId: detail.id, treeId: tree.id };
}

const countTree = (nodes) => nodes.reduce((n, node) => n + 1 + countTree(node.components), 0);
const treePath = (id) => `/v1/products/${id}/components/tree?recursion_depth=10`;
const LIST_PATH = `/v1/products?brand[in]=${LIST_BRAND}&order_by=-created_at`;

/** `product-list-search`: words of the seeded names, the last a prefix (every word must appear): "product" and 12, 120–129, 1200–1299. */
export const SEARCH_TEXT = "product 12";
export const SEARCH_MATCHES = 111;
const SEARCH_PATH = `/v1/products?search=${encodeURIComponent(SEARCH_TEXT)}&order_by=-created_at`;

/** The products scenarios, in this order in every round; their figures are summed up in the `Products` block of the output. */
export const PRODUCT_SCENARIOS = {
  detail: "product-detail",
  detailSignedIn: "product-detail-signed-in",
  list: "product-list",
  search: "product-list-search",
  tree: "product-tree",
  create: "product-create",
};

const productScenarios = [
  // One base product with its embeds: type, bill of materials (3), 10 direct components, 1 video.
  // Anonymous, from the steady address pool (read-ip, 300/min per address).
  {
    name: PRODUCT_SCENARIOS.detail,
    method: "GET",
    addresses: PRODUCT_ADDRESSES,
    path: "/v1/products/:id",
    seed: async (ctx) => {
      const { detailId } = await seedProducts(ctx);
      const path = `/v1/products/${detailId}`;
      const body = await json(await ctx.fetch(path, { headers: SEED_HEADERS }), `GET ${path}`, 200);
      if (
        body.id !== detailId ||
        body.components?.length !== 10 ||
        body.bill_of_materials?.length !== 3 ||
        body.videos?.length !== 1 ||
        !body.product_type
      ) {
        throw new Error(`seed: GET ${path} lacks its embeds: ${JSON.stringify(body).slice(0, 300)}`);
      }
      return { path };
    },
  },
  // The same read signed in (a bearer token of one of PRODUCT_USERS accounts, round robin;
  // read-user, 1,500/min each): the access token's session check travels with the read (issue 24:
  // one D1 round trip for a signed-in read; two before).
  {
    name: PRODUCT_SCENARIOS.detailSignedIn,
    method: "GET",
    path: "/v1/products/:id",
    users: PRODUCT_USERS,
    seed: async (ctx) => {
      const { detailId } = await seedProducts(ctx);
      const { tokens } = await seedProductUsers(ctx);
      const path = `/v1/products/${detailId}`;
      const body = await json(
        await ctx.fetch(path, { headers: { ...SEED_HEADERS, authorization: `Bearer ${tokens[1]}` } }),
        `GET ${path} signed in`,
        200,
      );
      if (body.id !== detailId || body.components?.length !== 10)
        throw new Error(`seed: GET ${path} signed in lacks its embeds: ${JSON.stringify(body).slice(0, 300)}`);
      return {
        path,
        headers: { authorization: `Bearer ${tokens[0]}` },
        vary: (i) => ({ headers: { authorization: `Bearer ${tokens[i % PRODUCT_USERS]}` } }),
      };
    },
  },
  // A page (default size 50) of the 250 products of one brand, newest first, out of 2,000 base
  // products in 8 brands (and the detail and tree products). Anonymous.
  {
    name: PRODUCT_SCENARIOS.list,
    method: "GET",
    addresses: PRODUCT_ADDRESSES,
    path: LIST_PATH,
    seed: async (ctx) => {
      await seedProducts(ctx);
      const body = await json(await ctx.fetch(LIST_PATH, { headers: SEED_HEADERS }), `GET ${LIST_PATH}`, 200);
      const perBrand = LIST_PRODUCTS / LIST_BRANDS.length;
      const times = (body.items ?? []).map((p) => Date.parse(p.created_at));
      if (
        body.total !== perBrand ||
        body.items?.length !== 50 ||
        body.items.some((p) => p.brand !== LIST_BRAND) ||
        times.some((t, i) => i > 0 && t > times[i - 1])
      ) {
        throw new Error(
          `seed: GET ${LIST_PATH} is not the first 50 of ${perBrand} ${LIST_BRAND} products, newest first: ${JSON.stringify(body).slice(0, 300)}`,
        );
      }
    },
  },
  // Full-text search over the 2,000 base products (and the components of the detail and tree
  // products, which the search leaves out): SEARCH_MATCHES match, the first page of 50, newest
  // first. Anonymous.
  {
    name: PRODUCT_SCENARIOS.search,
    method: "GET",
    addresses: PRODUCT_ADDRESSES,
    path: SEARCH_PATH,
    seed: async (ctx) => {
      await seedProducts(ctx);
      const body = await json(await ctx.fetch(SEARCH_PATH, { headers: SEED_HEADERS }), `GET ${SEARCH_PATH}`, 200);
      const words = (p) => p.name.split(" ");
      if (
        body.total !== SEARCH_MATCHES ||
        body.items?.length !== 50 ||
        body.items.some((p) => !words(p).includes("product") || !words(p).some((w) => w.startsWith("12")))
      ) {
        throw new Error(`seed: GET ${SEARCH_PATH} is not the first 50 of ${SEARCH_MATCHES} matches: ${JSON.stringify(body).slice(0, 300)}`);
      }
    },
  },
  // The whole tree of a product holding exactly 1,000 components (10 × (1 + 99)), two levels, in
  // one answer: the route's maximum (1,001 within the depth would be a 400). Anonymous.
  {
    name: PRODUCT_SCENARIOS.tree,
    method: "GET",
    addresses: PRODUCT_ADDRESSES,
    path: "/v1/products/:id/components/tree?recursion_depth=10",
    seed: async (ctx) => {
      const { treeId } = await seedProducts(ctx);
      const path = treePath(treeId);
      const body = await json(await ctx.fetch(path, { headers: SEED_HEADERS }), `GET ${path}`, 200);
      if (
        !Array.isArray(body) ||
        body.length !== TREE_TOP ||
        countTree(body) !== TREE_COMPONENTS ||
        body.some((c) => c.components.length !== TREE_CHILDREN)
      ) {
        throw new Error(`seed: GET ${path} is not a tree of ${TREE_COMPONENTS} components: ${JSON.stringify(body).slice(0, 300)}`);
      }
      return { path };
    },
  },
  // A base product with 50 nested components (10 top-level ones with 4 each) and bills of
  // materials on 11 records, from PRODUCT_USERS verified accounts in turn (write-user,
  // 600/min each). Every response adds 51 products rows, as real creates would: on an instance of
  // its own (`app-writes`, same bundle and settings as `app`), so the reads above keep measuring
  // the data their seeds made (a filtered list reads every base product, see bench/README.md).
  {
    name: PRODUCT_SCENARIOS.create,
    method: "POST",
    path: "/v1/products",
    instance: "writes",
    users: PRODUCT_USERS,
    seed: async (ctx) => {
      const { tokens, materialIds } = await seedProductUsers(ctx);
      const body = createBody(materialIds);
      const created = await json(
        await ctx.fetch("/v1/products", {
          method: "POST",
          headers: { ...SEED_HEADERS, authorization: `Bearer ${tokens[PRODUCT_USERS - 1]}` },
          body: JSON.stringify(body),
        }),
        "POST /v1/products (50 components)",
        201,
      );
      const path = treePath(created.id);
      const tree = await json(await ctx.fetch(path, { headers: SEED_HEADERS }), `GET ${path}`, 200);
      if (created.components?.length !== 10 || created.bill_of_materials?.length !== 2 || countTree(tree) !== CREATE_COMPONENTS) {
        throw new Error(
          `seed: POST /v1/products did not create 10 components with ${CREATE_COMPONENTS} in all: ${JSON.stringify(created).slice(0, 300)}`,
        );
      }
      return {
        body,
        headers: { authorization: `Bearer ${tokens[0]}` },
        vary: (i) => ({ headers: { authorization: `Bearer ${tokens[i % PRODUCT_USERS]}` } }),
      };
    },
  },
];

export const scenarios = [
  { name: "live", method: "GET", path: "/live" },
  // A one-query read with the request-rate limiters on (wrangler.jsonc: RATE_LIMITS_ENABLED=true):
  // the read-ip counter of the client's address, one counter-store call.
  { name: "units", method: "GET", path: "/v1/units" },
  // The same read on a second app instance (same bundle) with RATE_LIMITS_ENABLED=false: next to
  // `units`, what the limiter costs a read (bench/README.md, The limiter).
  { name: "units-no-limits", method: "GET", path: "/v1/units", instance: "no-limits" },
  // The same read with limits on, every request from an address never seen before (10.1.0.0 up,
  // 16.7 M addresses, none repeated within a run: the target fails if one is): each read creates
  // its address's counter object. The cold-start worst case, next to `units` (steady clients).
  { name: "units-new-clients", method: "GET", path: "/v1/units", addresses: NEW_CLIENT_POOL },
  // A successful bearer login: 1 D1 round trip to find the account, one Argon2id verification
  // (m=19456 KiB, t=2, p=1, wrangler.jsonc), 1 batch to store the refresh token. Every response
  // issues a new session (a refresh_tokens row), as real logins do. Over the account pool too:
  // a login takes a unit of its account's failed-login budget (3) before the hash and gives it
  // back only after, so one account with 10 logins in flight has its budget spent by the ones
  // still hashing and answers 429. The login-ip limit (60/min per address) is spread by the rotation.
  {
    name: "login",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: poolEmail(0), password: LOGIN_ACCOUNT.password },
    vary: (i) => ({ body: { username: poolEmail(i % ACCOUNT_POOL), password: LOGIN_ACCOUNT.password } }),
    seed: async (ctx) => {
      await seedAccountPool(ctx);
    },
  },
  // An existing account, wrong password: one lookup, one Argon2id verification, 400. Each request
  // takes the next account of the pool (see ACCOUNT_POOL for its size).
  {
    name: "login-wrong-password",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: poolEmail(0), password: WRONG_PASSWORD },
    vary: (i) => ({ body: { username: poolEmail(i % ACCOUNT_POOL), password: WRONG_PASSWORD } }),
    expectStatus: 400,
    seed: async (ctx) => {
      await seedAccountPool(ctx);
      // The last pool account: the load reaches it only after ACCOUNT_POOL requests.
      await expectBadCredentials(ctx, { username: poolEmail(ACCOUNT_POOL - 1), password: WRONG_PASSWORD });
    },
  },
  // No such account: one lookup, one Argon2id verification against a dummy hash, the same 400.
  // Next to login-wrong-password it shows whether timing tells which emails have an account. A
  // different unknown email per request: the failed-login budget is kept per email whether or not
  // it has an account.
  {
    name: "login-unknown",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: "nobody.0@example.org", password: LOGIN_ACCOUNT.password },
    vary: (i) => ({ body: { username: `nobody.${i % UNKNOWN_EMAILS}@example.org`, password: LOGIN_ACCOUNT.password } }),
    expectStatus: 400,
    seed: async (ctx) => {
      await expectBadCredentials(ctx, { username: "nobody.here@example.org", password: LOGIN_ACCOUNT.password });
    },
  },
  ...productScenarios,
];
