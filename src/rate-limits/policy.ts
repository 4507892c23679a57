import { compilePath } from "../lib/route-matcher";

/**
 * How long a counter-store call may take before it counts as unreachable. Calls that fail open
 * give up soon, so a slow store barely slows a read (`RATE_LIMIT_STORE_TIMEOUT_MS` changes it);
 * calls that fail closed wait longer, since giving up refuses a sign-in (a busy isolate or a
 * cold object can take a second).
 */
export const LIMITER_TIMEOUT_MS = { failOpen: 1_000, failClosed: 5_000 } as const;

/**
 * Whose counter a limit uses: the client IP (IPv6 by /64), the signed-in user, a keyed digest of a
 * login identifier or mailbox, a camera pairing code, or a camera.
 */
export type LimitKey = "ip" | "user" | "email" | "pairing-code" | "camera";

/** One row of the limits table. */
export interface LimitSpec {
  key: LimitKey;
  amount: number;
  windowSeconds: number;
  /**
   * `request`: a request-rate limiter, switched off by `RATE_LIMITS_ENABLED=false`.
   * `guard`: protects accounts or mailboxes (failure budgets, reset mail); always on.
   */
  kind: "request" | "guard";
  /** When the counter store cannot answer: `open` lets the request through, `closed` refuses it with 503. */
  onStoreFailure: "open" | "closed";
}

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

/**
 * Every limit of the service, in one table (the spec's Limits section, and decisions.md's
 * "Limits not given by the spec"). The name is the policy id clients see in `RateLimit-Policy`.
 * Windows are fixed and start with the first request counted in them.
 */
export const LIMITS = {
  // General buckets: every /v1 request counts in one of them, a signed-in export in two (see `planRequestLimits`).
  "read-ip": { key: "ip", amount: 300, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "write-ip": { key: "ip", amount: 120, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "upload-ip": { key: "ip", amount: 30, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "read-user": { key: "user", amount: 1500, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "write-user": { key: "user", amount: 600, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "upload-user": { key: "user", amount: 300, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "export-ip": { key: "ip", amount: 30, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "export-signed-in-ip": { key: "ip", amount: 90, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  // Authentication routes, per client IP, on top of the general bucket. Auth flows fail closed.
  "login-ip": { key: "ip", amount: 60, windowSeconds: MINUTE, kind: "request", onStoreFailure: "closed" },
  "register-ip": { key: "ip", amount: 5, windowSeconds: HOUR, kind: "request", onStoreFailure: "closed" },
  "verify-ip": { key: "ip", amount: 3, windowSeconds: HOUR, kind: "request", onStoreFailure: "closed" },
  "request-verification-ip": { key: "ip", amount: 3, windowSeconds: HOUR, kind: "request", onStoreFailure: "closed" },
  "forgot-password-ip": { key: "ip", amount: 3, windowSeconds: HOUR, kind: "request", onStoreFailure: "closed" },
  "reset-password-ip": { key: "ip", amount: 3, windowSeconds: HOUR, kind: "request", onStoreFailure: "closed" },
  // Per account, whatever the IP: reset mail to one mailbox, and failure budgets.
  "forgot-password-email": { key: "email", amount: 3, windowSeconds: HOUR, kind: "guard", onStoreFailure: "closed" },
  "failed-login": { key: "email", amount: 3, windowSeconds: MINUTE, kind: "guard", onStoreFailure: "closed" },
  "wrong-secret-minute": { key: "user", amount: 3, windowSeconds: MINUTE, kind: "guard", onStoreFailure: "closed" },
  "wrong-secret-day": { key: "user", amount: 100, windowSeconds: DAY, kind: "guard", onStoreFailure: "closed" },
  // Camera plugin: pairing codes are short, so claims are bounded per IP and per code (guessing
  // fails closed); tunnel handshakes per IP and, once authenticated, per camera.
  "pairing-register-ip": { key: "ip", amount: 10, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "pairing-claim-ip": { key: "ip", amount: 10, windowSeconds: MINUTE, kind: "request", onStoreFailure: "closed" },
  "pairing-claim-code": { key: "pairing-code", amount: 5, windowSeconds: 10 * MINUTE, kind: "guard", onStoreFailure: "closed" },
  "camera-connect-ip": { key: "ip", amount: 30, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
  "camera-connect-camera": { key: "camera", amount: 12, windowSeconds: MINUTE, kind: "request", onStoreFailure: "open" },
} as const satisfies Record<string, LimitSpec>;

/** The name of a limit: its policy id in `RateLimit-Policy`. */
export type LimitName = keyof typeof LIMITS;

/** Whether any of `names` refuses requests (503) rather than letting them through when the counter store fails. */
export function failsClosed(names: readonly LimitName[]): boolean {
  return names.some((name) => LIMITS[name].onStoreFailure === "closed");
}

/**
 * Whether a limit's counter must survive an object restart (kept in SQLite): guards, and windows
 * longer than a minute. Minute request rates may live in memory; see src/rate-limits/object.ts.
 */
export function isDurable(name: LimitName): boolean {
  const { kind, windowSeconds } = LIMITS[name];
  return kind === "guard" || windowSeconds > 60;
}

/** The shared budget of wrong passwords and codes at every step-up and challenge route. */
export const WRONG_SECRET_BUDGET = ["wrong-secret-minute", "wrong-secret-day"] as const satisfies readonly LimitName[];

/** Route-specific IP limits, counted on top of the request's general bucket. */
const ROUTE_LIMITS: ReadonlyArray<{ method: string; path: string; limit: LimitName }> = [
  { method: "POST", path: "/v1/auth/bearer/login", limit: "login-ip" },
  { method: "POST", path: "/v1/auth/session/login", limit: "login-ip" },
  { method: "POST", path: "/v1/auth/register", limit: "register-ip" },
  { method: "POST", path: "/v1/auth/verify", limit: "verify-ip" },
  { method: "POST", path: "/v1/auth/request-verify-token", limit: "request-verification-ip" },
  { method: "POST", path: "/v1/auth/forgot-password", limit: "forgot-password-ip" },
  { method: "POST", path: "/v1/auth/reset-password", limit: "reset-password-ip" },
  // Provider sign-ins end in a login: they share the password login's budget per IP.
  { method: "GET", path: "/v1/oauth/:provider/session/callback", limit: "login-ip" },
  { method: "GET", path: "/v1/oauth/:provider/token/callback", limit: "login-ip" },
  { method: "POST", path: "/v1/oauth/token/claim", limit: "login-ip" },
  { method: "POST", path: "/v1/auth/mfa/oauth/claim", limit: "login-ip" },
  { method: "POST", path: "/v1/plugins/rpi-cam/pairing/register", limit: "pairing-register-ip" },
  { method: "POST", path: "/v1/plugins/rpi-cam/pairing/claim", limit: "pairing-claim-ip" },
  { method: "GET", path: "/v1/plugins/rpi-cam/ws/connect", limit: "camera-connect-ip" },
];

/** Requests that carry file bytes: the upload buckets. */
const UPLOAD_ROUTES = [
  "/v1/products/:id/images",
  "/v1/products/:id/files",
  "/v1/components/:id/images",
  "/v1/components/:id/files",
  "/v1/plugins/rpi-cam/device/cameras/:id/image-upload",
  "/v1/plugins/rpi-cam/device/cameras/:id/preview-thumbnail-upload",
].map(compilePath);

/** Exports: their own, stricter buckets. */
const EXPORT_ROUTES = ["/v1/products/export", "/v1/products/:id/export"].map(compilePath);

const COMPILED_ROUTE_LIMITS = ROUTE_LIMITS.map((entry) => ({ ...entry, pattern: compilePath(entry.path) }));

/** The general bucket family of a request. */
export type RequestCategory = "read" | "write" | "upload" | "export";

/** Which general bucket a request falls in, by method and path. */
export function requestCategory(method: string, path: string): RequestCategory {
  if (method === "GET" || method === "HEAD") {
    return EXPORT_ROUTES.some((pattern) => pattern.test(path)) ? "export" : "read";
  }
  if (method === "POST" && UPLOAD_ROUTES.some((pattern) => pattern.test(path))) return "upload";
  return "write";
}

/** The counters one request consumes, grouped by whose they are (one counter-store call per group). */
export interface RequestLimitPlan {
  ip: LimitName[];
  user: LimitName[];
}

/**
 * The request-rate limits of one request. A caller with a live access token (`userId`) counts in
 * the per-user bucket and is never held by the IP bucket; exports are also counted per IP for
 * signed-in users (a ceiling for a shared account), and authentication routes add their own IP limit.
 */
export function planRequestLimits(method: string, path: string, userId: number | null): RequestLimitPlan {
  const category = requestCategory(method, path);
  const names: LimitName[] =
    category === "export"
      ? userId === null
        ? ["export-ip"]
        : ["read-user", "export-signed-in-ip"]
      : [userId === null ? `${category}-ip` : `${category}-user`];
  for (const entry of COMPILED_ROUTE_LIMITS) {
    if (entry.method === method && entry.pattern.test(path)) names.push(entry.limit);
  }
  const plan: RequestLimitPlan = { ip: [], user: [] };
  for (const name of names) {
    const { key } = LIMITS[name];
    if (key !== "ip" && key !== "user") throw new Error(`${name} is keyed by ${key} and cannot be planned per request`);
    plan[key].push(name);
  }
  return plan;
}
