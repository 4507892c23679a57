import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for Cloudflare's REST API (https://developers.cloudflare.com/api/), enough for what
 * `npm run setup:production` asks of it through wrangler (wrangler honours
 * `CLOUDFLARE_API_BASE_URL`): D1 databases, KV namespaces, R2 buckets and Queues (list, get,
 * create), and a Worker's secrets (list). Written from the API's documented shapes: every answer
 * is the v4 envelope `{ success, errors, messages, result, result_info? }`, an unknown account or
 * token is refused, and an unknown resource is the documented error code. Every call is recorded,
 * and any path it does not know is answered 404 and recorded as unhandled, so a test can tell a
 * new call apart from a passing one.
 */

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

export interface FakeAccountState {
  d1: { uuid: string; name: string; created_at: string }[];
  kv: { id: string; title: string }[];
  r2: { name: string; creation_date: string }[];
  queues: { queue_id: string; queue_name: string; created_on: string; modified_on: string }[];
  /** Worker name -> its secrets' names. A Worker that is absent has never been deployed. */
  scripts: Record<string, { secrets: string[] }>;
}

export interface FakeCloudflareApi {
  /** The base URL for CLOUDFLARE_API_BASE_URL (ends with /client/v4). */
  readonly url: string;
  readonly accountId: string;
  readonly token: string;
  readonly calls: RecordedCall[];
  readonly unhandled: RecordedCall[];
  readonly state: FakeAccountState;
  /** The calls that changed something (POST, PUT, PATCH, DELETE). */
  writes(): RecordedCall[];
  close(): Promise<void>;
}

const now = () => new Date().toISOString();
const hex = (bytes: number) => randomBytes(bytes).toString("hex");

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

const ok = (res: ServerResponse, result: unknown, resultInfo?: object) =>
  send(res, 200, { success: true, errors: [], messages: [], result, ...(resultInfo ? { result_info: resultInfo } : {}) });
const error = (res: ServerResponse, status: number, code: number, message: string) =>
  send(res, status, { success: false, errors: [{ code, message }], messages: [], result: null });

/** `page` / `per_page` of a list, with the documented `result_info`. */
function paged<T>(res: ServerResponse, items: T[], query: Record<string, string>): void {
  const perPage = Math.max(1, Number(query.per_page ?? 20));
  const page = Math.max(1, Number(query.page ?? 1));
  const slice = items.slice((page - 1) * perPage, page * perPage);
  ok(res, slice, {
    page,
    per_page: perPage,
    count: slice.length,
    total_count: items.length,
    total_pages: Math.ceil(items.length / perPage),
  });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Starts the fake on 127.0.0.1:`port` (0: any free port). */
export async function startFakeCloudflareApi(
  options: { port?: number; state?: Partial<FakeAccountState> } = {},
): Promise<FakeCloudflareApi> {
  const accountId = hex(16);
  const token = `fake-token-${hex(8)}`;
  const state: FakeAccountState = { d1: [], kv: [], r2: [], queues: [], scripts: {}, ...options.state };
  const calls: RecordedCall[] = [];
  const unhandled: RecordedCall[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const query = Object.fromEntries(url.searchParams);
    const call: RecordedCall = { method: req.method ?? "GET", path: url.pathname, query, body: await readBody(req) };
    calls.push(call);
    const path = url.pathname.replace(/^\/client\/v4/, "");
    if (req.headers.authorization !== `Bearer ${token}`) return error(res, 403, 10000, "Authentication error");

    // The account's own resources.
    const account = /^\/accounts\/([0-9a-f]{32})(\/.*)$/.exec(path);
    if (!account) {
      unhandled.push(call);
      return error(res, 404, 7003, `Could not route to ${path}, perhaps your object identifier is invalid?`);
    }
    if (account[1] !== accountId) return error(res, 403, 10000, "Authentication error");
    const rest = account[2]!;
    const body = (call.body ?? {}) as Record<string, unknown>;
    const name = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null);

    // D1: https://developers.cloudflare.com/api/resources/d1/subresources/database/
    if (rest === "/d1/database" && call.method === "GET") {
      const filtered = query.name ? state.d1.filter((db) => db.name.includes(query.name!)) : state.d1;
      return paged(
        res,
        filtered.map((db) => ({ ...db, version: "production", num_tables: 0, file_size: 0 })),
        query,
      );
    }
    if (rest === "/d1/database" && call.method === "POST") {
      const dbName = name(body.name);
      if (!dbName) return error(res, 400, 7400, "The request is malformed: name is required");
      if (state.d1.some((db) => db.name === dbName)) return error(res, 400, 7502, "A database with that name already exists");
      const created = { uuid: randomUUID(), name: dbName, created_at: now() };
      state.d1.push(created);
      return ok(res, { ...created, version: "production" });
    }
    const d1One = /^\/d1\/database\/([^/]+)$/.exec(rest);
    if (d1One && call.method === "GET") {
      const found = state.d1.find((db) => db.uuid === d1One[1] || db.name === d1One[1]);
      return found
        ? ok(res, { ...found, version: "production", num_tables: 0, file_size: 0 })
        : error(res, 404, 7404, "The database could not be found");
    }

    // Workers KV: https://developers.cloudflare.com/api/resources/kv/subresources/namespaces/
    if (rest === "/storage/kv/namespaces" && call.method === "GET") {
      return paged(
        res,
        state.kv.map((ns) => ({ ...ns, supports_url_encoding: true })),
        query,
      );
    }
    if (rest === "/storage/kv/namespaces" && call.method === "POST") {
      const title = name(body.title);
      if (!title) return error(res, 400, 10019, "a title is required");
      if (state.kv.some((ns) => ns.title === title))
        return error(res, 400, 10014, "A namespace with this account ID and title already exists.");
      const created = { id: hex(16), title };
      state.kv.push(created);
      return ok(res, { ...created, supports_url_encoding: true });
    }

    // R2: https://developers.cloudflare.com/api/resources/r2/subresources/buckets/
    if (rest === "/r2/buckets" && call.method === "GET") {
      return ok(res, { buckets: state.r2.map((bucket) => ({ ...bucket, location: "WEUR", storage_class: "Standard" })) });
    }
    if (rest === "/r2/buckets" && call.method === "POST") {
      const bucketName = name(body.name);
      if (!bucketName || !/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(bucketName))
        return error(res, 400, 10005, "The specified bucket name is not valid.");
      if (state.r2.some((bucket) => bucket.name === bucketName))
        return error(res, 409, 10004, "The bucket you tried to create already exists, and you own it.");
      const created = { name: bucketName, creation_date: now() };
      state.r2.push(created);
      return ok(res, { ...created, location: "WEUR", storage_class: "Standard" });
    }
    const r2One = /^\/r2\/buckets\/([^/]+)$/.exec(rest);
    if (r2One && call.method === "GET") {
      const found = state.r2.find((bucket) => bucket.name === r2One[1]);
      return found
        ? ok(res, { ...found, location: "WEUR", storage_class: "Standard" })
        : error(res, 404, 10006, "The specified bucket does not exist.");
    }

    // Queues: https://developers.cloudflare.com/api/resources/queues/
    if (rest === "/queues" && call.method === "GET") {
      const filtered = query.name ? state.queues.filter((q) => q.queue_name === query.name) : state.queues;
      return paged(
        res,
        filtered.map((q) => ({ ...q, producers: [], consumers: [], producers_total_count: 0, consumers_total_count: 0 })),
        query,
      );
    }
    if (rest === "/queues" && call.method === "POST") {
      const queueName = name(body.queue_name);
      if (!queueName) return error(res, 400, 11003, "queue_name is required");
      if (state.queues.some((q) => q.queue_name === queueName)) return error(res, 409, 11009, "A queue with this name already exists");
      const created = { queue_id: hex(16), queue_name: queueName, created_on: now(), modified_on: now() };
      state.queues.push(created);
      return ok(res, { ...created, producers: [], consumers: [], producers_total_count: 0, consumers_total_count: 0 });
    }
    const queueOne = /^\/queues\/([0-9a-f]{32})$/.exec(rest);
    if (queueOne && call.method === "GET") {
      const found = state.queues.find((q) => q.queue_id === queueOne[1]);
      return found ? ok(res, found) : error(res, 404, 11000, "Queue does not exist");
    }

    // A Worker's secrets: https://developers.cloudflare.com/api/resources/workers/subresources/scripts/subresources/secrets/
    const secrets = /^\/workers\/scripts\/([^/]+)\/secrets$/.exec(rest);
    if (secrets && call.method === "GET") {
      const script = state.scripts[secrets[1]!];
      if (!script) return error(res, 404, 10007, "This Worker does not exist on your account.");
      return ok(
        res,
        script.secrets.map((secret) => ({ name: secret, type: "secret_text" })),
      );
    }

    unhandled.push(call);
    return error(res, 404, 7003, `Could not route to ${path}, perhaps your object identifier is invalid?`);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((failure: unknown) => error(res, 500, 10001, String(failure)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/client/v4`,
    accountId,
    token,
    calls,
    unhandled,
    state,
    writes: () => calls.filter((call) => call.method !== "GET" && call.method !== "HEAD"),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
