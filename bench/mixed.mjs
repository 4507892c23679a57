// The mixed read/write workload (bench/README.md "Mixed reads and writes"): many signed-in users,
// each in a closed loop (one request in flight per user: the next is sent when the last answer
// has come), reading (a product, a component, list pages, a filter, a search, a tree, their own
// products) and writing (keyed creates, sometimes sent twice or retried; If-Match patches, some
// of them racing; bill-of-materials edits; deletes). Every write renews the generations the read
// copies are validated against, so most list reads miss while people write. Run side by side
// against the same workload on the code of another commit (by default the start of the last
// round), on instances started alike, rate limits off, in interleaved rounds.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { workerdPids } from "./memory.mjs";
import { applyMigrations, disposeAll, startApp } from "./targets.mjs";

const SEED_HEADERS = { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" };
const ACCOUNT = { email: "bench.mixed@example.org", username: "bench_mixed", password: "copper-harbour-62-violet" };
const BRANDS = ["fairphone", "nokia", "krups", "bosch", "philips", "lenovo", "dell", "miele"];
const WORDS = ["kettle", "grinder", "phone", "drill", "lamp", "laptop", "toaster", "blender"];
const MATERIALS = ["Mixed steel", "Mixed aluminium", "Mixed ABS", "Mixed copper", "Mixed glass", "Mixed rubber"];

/** What the users do, by weight (per 100 actions): 80 reads, 20 writes. */
export const MIX = [
  ["detail", 24],
  ["component", 8],
  ["list", 10],
  ["filter", 10],
  ["search", 8],
  ["tree", 8],
  ["own", 12],
  ["create", 5],
  ["patch", 7],
  ["bom", 5],
  ["delete", 3],
];

/** A small deterministic random source, so both instances get the same sequence of actions. */
function random(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

async function json(response, what, expect) {
  const text = await response.text();
  if (!expect.includes(response.status)) throw new Error(`mixed seed: ${what} answered ${response.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

function productBody(rnd, n, materialIds) {
  const brand = BRANDS[n % BRANDS.length];
  const word = WORDS[Math.floor(rnd() * WORDS.length)];
  return {
    name: `Mixed ${word} ${n}`,
    brand,
    model: `M-${n}`,
    weight_g: 100 + (n % 900),
    bill_of_materials: [{ material_id: materialIds[n % materialIds.length], quantity: 0.5, unit: "kg" }],
    components: Array.from({ length: 4 }, (_, i) => ({
      name: `Part ${n}.${i}`,
      amount_in_parent: 1 + i,
      components: i === 0 ? [{ name: `Screw ${n}`, amount_in_parent: 4 }] : [],
    })),
  };
}

/**
 * One instance's data: `users` verified accounts (copies of one registered account, as the
 * products scenarios make them), each signed in, each with `perUser` products of 6 records made
 * through the API, and the materials their bills name.
 */
export async function seedMixed({ db, url }, { users, perUser }) {
  const call = (p, init = {}) => fetchRetrying(url + p, { ...init, headers: { ...SEED_HEADERS, ...init.headers } });
  // 409: a first attempt whose connection closed had registered it.
  await json(await call("/v1/auth/register", { method: "POST", body: JSON.stringify(ACCOUNT) }), "register", [201, 409]);
  await db.prepare("UPDATE users SET is_verified = 1 WHERE email = ?").bind(ACCOUNT.email).run();
  const { results: columns } = await db.prepare("SELECT name FROM pragma_table_info('users')").all();
  const copied = columns.map((r) => r.name).filter((c) => !["id", "email", "email_canonical", "username"].includes(c));
  await db
    .prepare(
      `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?1)
       INSERT INTO users (email, email_canonical, username, ${copied.map((c) => `"${c}"`).join(", ")})
       SELECT 'bench.mixed.' || n || '@example.org', 'bench.mixed.' || n || '@example.org', 'bench_mixed_' || n, ${copied.map((c) => `u."${c}"`).join(", ")}
       FROM seq, users AS u WHERE u.email_canonical = ?2`,
    )
    .bind(users, ACCOUNT.email)
    .run();
  await db.batch(MATERIALS.map((name) => db.prepare("INSERT INTO materials (name) VALUES (?)").bind(name)));
  const { results } = await db
    .prepare(`SELECT id FROM materials WHERE name IN (${MATERIALS.map(() => "?").join(", ")}) ORDER BY id`)
    .bind(...MATERIALS)
    .all();
  const materialIds = results.map((r) => r.id);
  const rnd = random(7);
  const people = [];
  for (let u = 0; u < users; u++) {
    const login = await json(
      await call("/v1/auth/bearer/login", {
        method: "POST",
        headers: { "cf-connecting-ip": `127.0.2.${u}` },
        body: JSON.stringify({ username: `bench.mixed.${u}@example.org`, password: ACCOUNT.password }),
      }),
      "login",
      [200],
    );
    const auth = { authorization: `Bearer ${login.access_token}` };
    const products = [];
    for (let k = 0; k < perUser; k++) {
      const created = await json(
        await call("/v1/products", { method: "POST", headers: auth, body: JSON.stringify(productBody(rnd, u * perUser + k, materialIds)) }),
        "create",
        [201],
      );
      products.push({ id: created.id, components: created.components.map((c) => c.id) });
    }
    people.push({ auth, products });
  }
  return { people, materialIds };
}

/** One user's next request, chosen by `rnd` from MIX; returns the requests it makes (one, or two sent together). */
function nextAction(rnd, user, world) {
  let pick = rnd() * 100;
  let action = MIX[0][0];
  for (const [name, weight] of MIX) {
    if (pick < weight) {
      action = name;
      break;
    }
    pick -= weight;
  }
  const anyProduct = () => {
    const owner = world.people[Math.floor(rnd() * world.people.length)];
    return owner.products.length ? owner.products[Math.floor(rnd() * owner.products.length)] : null;
  };
  const own = () => (user.products.length ? user.products[Math.floor(rnd() * user.products.length)] : null);
  const get = (path) => [{ method: "GET", path, headers: user.auth }];
  switch (action) {
    case "detail": {
      const p = anyProduct();
      return p ? get(`/v1/products/${p.id}`) : get("/v1/products?size=20");
    }
    case "component": {
      const p = anyProduct();
      return p?.components.length
        ? get(`/v1/components/${p.components[Math.floor(rnd() * p.components.length)]}`)
        : get("/v1/products?size=20");
    }
    case "list":
      return get(`/v1/products?page=${1 + Math.floor(rnd() * 5)}&size=20`);
    case "filter":
      return get(`/v1/products?brand[in]=${BRANDS[Math.floor(rnd() * BRANDS.length)]}&size=20`);
    case "search":
      return get(`/v1/products?search=${WORDS[Math.floor(rnd() * WORDS.length)]}&size=20`);
    case "tree": {
      const p = anyProduct();
      return p ? get(`/v1/products/${p.id}/components/tree`) : get("/v1/products?size=20");
    }
    case "own":
      return get("/v1/products?owner=me&size=20");
    case "create": {
      const n = world.next++;
      const body = JSON.stringify(productBody(rnd, n, world.materialIds));
      const headers = { ...user.auth, "content-type": "application/json", "idempotency-key": `mixed-${world.tag}-${n}` };
      const request = { method: "POST", path: "/v1/products", headers, body, creates: true };
      // One create in five is sent twice at once (a double click), one in ten once more after its answer (a retry).
      if (rnd() < 0.2) return [request, { ...request, creates: false }];
      return rnd() < 0.125 ? [request, { ...request, creates: false, after: true }] : [request];
    }
    case "patch": {
      const p = own();
      if (!p) return get("/v1/products?owner=me&size=20");
      const patch = (weight) => ({
        method: "PATCH",
        path: `/v1/products/${p.id}`,
        headers: { ...user.auth, "content-type": "application/json", "if-match": "VERSION" },
        body: JSON.stringify({ weight_g: weight }),
        versionOf: p,
      });
      // One patch in four races a second one made with the same version: one of them gets 412.
      return rnd() < 0.25 ? [patch(200 + Math.floor(rnd() * 800)), patch(300)] : [patch(100 + Math.floor(rnd() * 900))];
    }
    case "bom": {
      const p = own();
      if (!p) return get("/v1/products?owner=me&size=20");
      const material = world.materialIds[Math.floor(rnd() * world.materialIds.length)];
      // Adds the material (409 when the bill has it) or changes its quantity (404 when it has not).
      return [
        {
          method: rnd() < 0.5 ? "POST" : "PATCH",
          path: `/v1/products/${p.id}/materials/${material}`,
          headers: { ...user.auth, "content-type": "application/json" },
          body: JSON.stringify({ quantity: Math.round(rnd() * 1000) / 100 + 0.01, unit: "kg" }),
        },
      ];
    }
    case "delete": {
      // Deletes the user's newest product (keeping one), so reads of it stop.
      if (user.products.length < 2) return get("/v1/products?owner=me&size=20");
      const p = user.products.pop();
      return [{ method: "DELETE", path: `/v1/products/${p.id}`, headers: user.auth }];
    }
  }
  return get("/v1/products?size=20");
}

/**
 * `fetch`, sent again (up to twice) when the connection closed before an answer came: on a
 * saturated machine a kept-alive connection can be closed by workerd as the client reuses it
 * (undici's "other side closed"). Sending twice is harmless here: reads, keyed creates (the key
 * replays), If-Match patches (412) and deletes (404).
 */
async function fetchRetrying(url, init) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (attempt >= 2) throw error;
    }
  }
}

/** Statuses a request of the workload may answer: reads of a record deleted meanwhile 404, racing patches 412, doubles 409. */
const EXPECTED = new Set([200, 201, 204, 304, 404, 409, 412]);

/**
 * The workload against `url` for `seconds`: every user of `world` in a closed loop. Returns the
 * requests answered, their statuses and latencies (ms), and the CPU the instance's workerd
 * process spent (user + system) over the run.
 */
export async function runMixed(url, world, { seconds, pid, seed = 1 }) {
  const statuses = {};
  // The first answer of each unexpected status, to say what went wrong.
  const samples = {};
  const latencies = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const ticks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };
  const cpuStart = ticks();
  const send = async (user, request) => {
    const headers = { ...request.headers, "cf-connecting-ip": user.address };
    if (request.versionOf) headers["if-match"] = `"${request.versionOf.version ?? 1}"`;
    const t0 = performance.now();
    let status = 0;
    let body = null;
    try {
      const response = await fetchRetrying(url + request.path, { method: request.method, headers, body: request.body });
      status = response.status;
      const text = await response.text();
      if (!EXPECTED.has(status) && !(status in samples)) samples[status] = `${request.method} ${request.path}: ${text.slice(0, 200)}`;
      if (request.creates && status === 201) body = JSON.parse(text);
      if (request.versionOf && status === 200) request.versionOf.version = JSON.parse(text).version;
      if (request.versionOf && status === 412) request.versionOf.version = undefined;
    } catch {
      status = 0;
    }
    latencies.push(performance.now() - t0);
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (body) user.products.push({ id: body.id, components: body.components.map((c) => c.id) });
  };
  const loop = async (user, index) => {
    const rnd = random(seed * 1000 + index + 1);
    while (performance.now() < deadline) {
      const requests = nextAction(rnd, user, world);
      const together = requests.filter((r) => !r.after);
      await Promise.all(together.map((r) => send(user, r)));
      for (const r of requests.filter((x) => x.after)) await send(user, r);
      // A patch that lost its race (or whose version is unknown) learns the version with the next read of the record.
      for (const r of requests) {
        if (r.versionOf && r.versionOf.version === undefined) {
          try {
            const response = await fetchRetrying(`${url}/v1/products/${r.versionOf.id}`, {
              headers: { ...user.auth, "cf-connecting-ip": user.address },
            });
            statuses[response.status] = (statuses[response.status] ?? 0) + 1;
            if (response.status === 200) r.versionOf.version = (await response.json()).version;
            else await response.arrayBuffer();
          } catch {
            statuses[0] = (statuses[0] ?? 0) + 1;
          }
          latencies.push(0);
        }
      }
    }
  };
  await Promise.all(world.people.map((user, i) => loop(user, i)));
  const wall = (performance.now() - started) / 1000;
  const cpuSeconds = (ticks() - cpuStart) / 100;
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const sorted = latencies.filter((x) => x > 0).sort((a, b) => a - b);
  const pct = (q) => (sorted.length ? +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1) : null);
  const unexpected = Object.entries(statuses)
    .filter(([s]) => !EXPECTED.has(Number(s)))
    .reduce((a, [, n]) => a + n, 0);
  return {
    requests,
    rps: +(requests / wall).toFixed(1),
    p50: pct(0.5),
    p99: pct(0.99),
    cpuMsPerRequest: +((cpuSeconds * 1000) / requests).toFixed(3),
    cpuCores: +(cpuSeconds / wall).toFixed(2),
    statuses,
    unexpected,
    samples,
  };
}

/** The workerd process Miniflare started for an instance: the one that appeared while it started. */
async function startWithPid(start) {
  const before = new Set(workerdPids());
  const app = await start();
  const pid = workerdPids().find((p) => !before.has(p));
  if (!pid) throw new Error(`${app.name}: no new workerd process found`);
  return { ...app, pid };
}

/**
 * The mixed section of `npm run bench` (`--only mixed`): `builds` ([{ label, bundle, config,
 * migrations }], the first the working tree) each get an instance (rate limits off), the same
 * seed and, in `rounds` interleaved rounds, `seconds` of the workload from `users` users.
 */
export async function runMixedBench({ builds, ports, users, perUser, seconds, rounds, doStorage, log }) {
  const instances = [];
  try {
    for (const [i, build] of builds.entries()) {
      const app = await startWithPid(() =>
        startApp(build.config, build.bundle, ports[i], false, {
          name: `mixed-${build.label}`,
          vars: { RATE_LIMITS_ENABLED: "false" },
          doStorage,
          // BENCH_MIXED_WORKERS_CACHE=off: Miniflare's Cache API does nothing (every match misses, no
          // put is stored), to measure what the local cache service costs workerd's CPU.
          ...(process.env.BENCH_MIXED_WORKERS_CACHE === "off" ? { miniflare: { cache: false } } : {}),
        }),
      );
      instances.push(app);
      app.db = await app.mf.getD1Database("DB");
      await applyMigrations(app.db, build.migrations);
      await fetch(`${app.url}/v1/units`, { headers: SEED_HEADERS }).then((r) => r.text());
      log(`mixed: seeding ${app.name} (${users} users × ${perUser} products)`);
      const seeded = await seedMixed(app, { users, perUser });
      app.world = {
        // Part of each Idempotency-Key, which allows no spaces.
        tag: build.label.replace(/[^A-Za-z0-9]+/g, "-"),
        next: users * perUser,
        materialIds: seeded.materialIds,
        people: seeded.people.map((p, u) => ({ ...p, address: `10.9.${u >> 8}.${u & 255}` })),
      };
      app.build = build;
    }
    const results = instances.map(() => []);
    for (let r = 1; r <= rounds; r++) {
      for (const [i, app] of instances.entries()) {
        const run = await runMixed(app.url, app.world, { seconds, pid: app.pid, seed: r });
        results[i].push(run);
        log(
          `mixed round ${r}/${rounds} ${app.build.label.padEnd(10)} ${String(run.rps).padStart(7)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  ` +
            `CPU ${run.cpuMsPerRequest} ms/request (${run.cpuCores} cores)  ${JSON.stringify(run.statuses)}` +
            (run.unexpected ? `  unexpected: ${JSON.stringify(run.samples)}` : ""),
        );
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rows = instances.map((app, i) => ({
      label: app.build.label,
      commit: app.build.commit ?? null,
      rps: median(results[i].map((x) => x.rps)),
      p50: median(results[i].map((x) => x.p50)),
      p99: median(results[i].map((x) => x.p99)),
      cpuMsPerRequest: median(results[i].map((x) => x.cpuMsPerRequest)),
      cpuCores: median(results[i].map((x) => x.cpuCores)),
      unexpected: results[i].reduce((a, x) => a + x.unexpected, 0),
      rounds: results[i],
    }));
    // Per round, this tree's req/s over the other's: the ratio that counts on a shared machine.
    const ratios = results[0].map((run, k) => +(run.rps / results[1]?.[k]?.rps).toFixed(3));
    return {
      users,
      perUser,
      seconds,
      rounds,
      rows,
      rpsRatioPerRound: ratios,
      rpsRatio: median(ratios),
      ok: rows.every((row) => row.unexpected === 0),
    };
  } finally {
    await disposeAll(instances);
  }
}

export function formatMixed(result) {
  const lines = [
    `Mixed reads and writes: ${result.users} users in closed loops, ${result.seconds} s × ${result.rounds} interleaved rounds, rate limits off (medians over rounds)`,
    "| code | requests/s | p50 | p99 | workerd CPU per request | workerd CPU | unexpected statuses |",
    "|---|---|---|---|---|---|---|",
    ...result.rows.map(
      (row) =>
        `| ${row.label}${row.commit ? ` (${row.commit.slice(0, 7)})` : ""} | ${row.rps} | ${row.p50} ms | ${row.p99} ms | ${row.cpuMsPerRequest} ms | ${row.cpuCores} cores | ${row.unexpected} |`,
    ),
    `requests/s of ${result.rows[0]?.label} ÷ ${result.rows[1]?.label}, per round: ${result.rpsRatioPerRound.join(", ")} (median ${result.rpsRatio})`,
  ];
  return lines.join("\n");
}
