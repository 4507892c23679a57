import { type OAuthConfig, oauthOutboundEntries, parseOAuthConfig } from "./auth/oauth-config";
import { type DataKeyRing, parseDataKey, parseKeyList } from "./lib/data-encryption";
import { createOutboundPolicy, type OutboundPolicy } from "./lib/outbound";
import { BUILT_IN_SIGNATURES, parseSignatures, type Signature } from "./lib/signature-scan";
import { LIMITER_TIMEOUT_MS } from "./rate-limits/policy";

/** OWASP's minimum Argon2id parameters; every environment but development refuses anything weaker. */
export const ARGON2_MINIMUM = { memoryKib: 19_456, iterations: 2, parallelism: 1 } as const;

/** The YouTube Data API v3, which creates, binds and ends live broadcasts. */
export const YOUTUBE_API_URL = "https://www.googleapis.com/youtube/v3/";

/** DataCite's REST API, where release DOIs are registered (`DATACITE_API_URL` points elsewhere, e.g. DataCite's test system). */
export const DATACITE_API_URL = "https://api.datacite.org";

/** The k-anonymity range endpoint of Have I Been Pwned's Pwned Passwords (`<prefix>` is appended). */
export const BREACHED_PASSWORDS_RANGE_URL = "https://api.pwnedpasswords.com/range/*";

export interface Argon2Params {
  memoryKib: number;
  iterations: number;
  parallelism: number;
}

export interface AppConfig {
  environment: string;
  isDevelopment: boolean;
  isProduction: boolean;
  /** Browser origins allowed by CORS and the cross-site check, besides the API's own origin. */
  corsOrigins: ReadonlySet<string>;
  argon2: Argon2Params;
  bootstrap: { email: string; password: string } | null;
  /**
   * `AUTH_TOKEN_SECRET`: signs new access and email-link tokens and names rate-limit counters
   * (keys derived from it, one per token kind, so a token of one kind never verifies as another).
   */
  tokenSecret: string;
  /**
   * The secrets a presented token may be signed with: `AUTH_TOKEN_SECRET`, then
   * `AUTH_TOKEN_SECRET_PREVIOUS` while it is set (a rotation: tokens signed before it stay good
   * until they expire; decisions.md, Key rotation).
   */
  tokenSecrets: readonly [string, ...string[]];
  /**
   * The data keys that seal secrets stored at rest (TOTP seeds, provider tokens):
   * `DATA_ENCRYPTION_KEYS` (`id:hex,...`, the first one seals) and `DATA_ENCRYPTION_KEY` as key id 0.
   */
  dataKey: DataKeyRing;
  /**
   * What release owner pseudonyms are derived from: `PSEUDONYM_KEY` when set, else data key id 0,
   * whatever key seals, so pseudonyms never change with a rotation.
   */
  pseudonymSecret: Uint8Array;
  /** Base URL of the app; email links point at `<appUrl>/verify#token=...` and `<appUrl>/reset-password#token=...`. */
  appUrl: string;
  email: { from: string; providerUrl: string | null; apiKey: string | null };
  outbound: OutboundPolicy;
  /** The malware scan of uploads: the built-in signatures plus `MALWARE_SIGNATURES`, and the external scanner when configured. */
  malwareScan: MalwareScanConfig;
  /** Identity-provider sign-in and the video-platform association (src/auth/oauth-config.ts). */
  oauth: OAuthConfig;
  /** The video platform's API (YouTube Data API v3) for live streams: `YOUTUBE_API_URL`, `VIDEO_PLATFORM_TIMEOUT_MS`. */
  videoPlatform: { apiUrl: string; timeoutMs: number };
  /** `RATE_LIMITS_ENABLED`: the request-rate limiters. The per-account guards (failure budgets, reset mail) are always on. */
  rateLimitsEnabled: boolean;
  /**
   * `RATE_LIMIT_STORE_TIMEOUT_MS`: how long a request waits for the counter store before its
   * fail-open limits let it through unlimited (default 1 s). Fail-closed limits wait 5 s, or this
   * long if it is longer. At most 30 s: sign-ins wait that long when the store is slow.
   */
  rateLimitStoreTimeoutMs: number;
  /** `CONTRIBUTOR_TERMS_VERSION`: the version of the contributor terms an account accepts (default 1). */
  contributorTermsVersion: number;
  /**
   * `RELEASE_BUILD_SLICE_MS`: how long one queue invocation of a release build works before it
   * saves a checkpoint and hands the rest to a new message (default 60 s; docs/releases.md).
   */
  releaseBuildSliceMs: number;
  /**
   * Who releases name as publisher and creator (`RELEASE_PUBLISHER`, default `relab`;
   * `RELEASE_CREATOR`, default the publisher; `RELEASE_CREATOR_ROR`, the creator's ROR id as a URL).
   */
  releaseAuthorship: ReleaseAuthorship;
  /**
   * DataCite, which registers release DOIs: `DATACITE_API_URL` (default DataCite's REST API),
   * `DATACITE_PREFIX`, the secrets `DATACITE_REPOSITORY_ID` and `DATACITE_PASSWORD`; null when any
   * of the last three is unset (releases then get no DOI: `doi_status` "disabled").
   */
  datacite: DataCiteConfig | null;
  /** `OAI_ADMIN_EMAIL`: the administrator OAI-PMH's Identify names (default the address of `EMAIL_FROM`). */
  oaiAdminEmail: string;
  /** The logical backups of D1 to R2 (src/services/operations/backup.ts, docs/operations.md). */
  backup: BackupConfig;
  /**
   * `RELEASE_SNAPSHOT_RECORDS`: records one batch of a release's snapshot copies, with their bills
   * of materials and images (default 10,000, whole base products at a time; docs/releases.md).
   */
  releaseSnapshotRecords: number;
  /**
   * `DELETION_SLICE_RECORDS`: records one slice of a deletion job removes, with their bills of
   * materials and media rows (default 2,000: about 0.2 s of D1 time); a deletion of at most this
   * many records is done at once in the request (docs/storage.md, "Deletion jobs").
   */
  deletionSliceRecords: number;
  /** `DELETION_RUN_MS`: how long one queue message of a deletion job works before it hands the rest to a new message (default 20 s). */
  deletionRunMs: number;
}

export interface ReleaseAuthorship {
  publisher: string;
  creator: string | null;
  creatorRor: string | null;
}

export interface DataCiteConfig {
  /** Without a trailing slash, e.g. `https://api.datacite.org`. */
  apiUrl: string;
  /** `10.NNNN`: the version DOI is `<prefix>/relab.<version>`, the concept DOI `<prefix>/relab.all`. */
  prefix: string;
  repositoryId: string;
  password: string;
  /** One call's time-out (`DATACITE_TIMEOUT_MS`, default 10 s). */
  timeoutMs: number;
}

export interface BackupConfig {
  /** `BACKUP_CRON`: the Cron Trigger (one of wrangler.jsonc's `crons`) that starts a backup (default `17 3 * * *`); empty: never. */
  cron: string | null;
  /** `BACKUP_RETENTION_DAYS`: backups older than this are deleted after a newer one completes (default 30). */
  retentionDays: number;
  /** `BACKUP_SLICE_MS`: how long one queue invocation writes before it checkpoints and hands on (default 60 s). */
  sliceMs: number;
}

/** The default backup schedule: daily at 03:17 UTC, away from the hour marks other jobs crowd. */
export const DEFAULT_BACKUP_CRON = "17 3 * * *";

export interface MalwareScanConfig {
  signatures: readonly Signature[];
  external: { url: string; token: string | null; timeoutMs: number } | null;
}

/** How long one external scan may take unless `MALWARE_SCANNER_TIMEOUT_MS` says otherwise. */
export const DEFAULT_SCAN_TIMEOUT_MS = 30_000;

export class ConfigError extends Error {
  override name = "ConfigError";
}

const cache = new WeakMap<object, AppConfig>();

/**
 * Reads and checks the Worker's variables once per `env` object (the runtime reuses it across
 * requests of an isolate). A bad value throws `ConfigError`, which the error handler turns into a
 * 500 and a log line naming the variable.
 */
export function loadConfig(env: Env): AppConfig {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env);
    cache.set(env, config);
  }
  return config;
}

function parseConfig(env: Env): AppConfig {
  // No default: a deployment that forgot ENVIRONMENT must not get development behaviour
  // (the email outbox, relaxed hashing).
  const environment = env.ENVIRONMENT?.trim();
  if (!environment) throw new ConfigError("ENVIRONMENT must be set");
  const isDevelopment = environment === "development";
  const isProduction = environment === "production";
  const argon2 = {
    memoryKib: positiveInt(env.ARGON2_MEMORY_KIB, "ARGON2_MEMORY_KIB", ARGON2_MINIMUM.memoryKib),
    iterations: positiveInt(env.ARGON2_ITERATIONS, "ARGON2_ITERATIONS", ARGON2_MINIMUM.iterations),
    parallelism: ARGON2_MINIMUM.parallelism,
  };
  if (!isDevelopment && (argon2.memoryKib < ARGON2_MINIMUM.memoryKib || argon2.iterations < ARGON2_MINIMUM.iterations)) {
    throw new ConfigError("ARGON2_MEMORY_KIB / ARGON2_ITERATIONS are below the OWASP minimum");
  }

  const tokenSecret = env.AUTH_TOKEN_SECRET ?? "";
  if (tokenSecret.length < 32) {
    throw new ConfigError("AUTH_TOKEN_SECRET must be set to at least 32 characters of random data");
  }
  const previousTokenSecret = optional(env.AUTH_TOKEN_SECRET_PREVIOUS);
  if (previousTokenSecret !== null && previousTokenSecret.length < 32) {
    throw new ConfigError("AUTH_TOKEN_SECRET_PREVIOUS must be the earlier AUTH_TOKEN_SECRET (at least 32 characters) or unset");
  }
  const { dataKey, pseudonymSecret } = parseDataKeys(env);
  const appUrl = httpUrl(env.APP_PUBLIC_URL, "APP_PUBLIC_URL");

  const providerUrl = optional(env.EMAIL_PROVIDER_URL);
  const malwareScan = parseMalwareScan(env);
  let oauth: OAuthConfig;
  try {
    oauth = parseOAuthConfig(env, appUrl);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const videoApiUrl = optional(env.YOUTUBE_API_URL) ?? YOUTUBE_API_URL;
  if (!videoApiUrl.endsWith("/")) throw new ConfigError("YOUTUBE_API_URL must end with /");
  const datacite = parseDataCite(env);
  const emailFrom = env.EMAIL_FROM?.trim() || "relab <noreply@relab.localhost>";
  const bootstrapEmail = optional(env.BOOTSTRAP_SUPERUSER_EMAIL);
  const bootstrapPassword = optional(env.BOOTSTRAP_SUPERUSER_PASSWORD);

  return {
    environment,
    isDevelopment,
    isProduction,
    corsOrigins: new Set(
      [env.APP_ORIGIN, env.SITE_ORIGIN, env.DOCS_ORIGIN].flatMap((value, i) =>
        originList(value, ["APP_ORIGIN", "SITE_ORIGIN", "DOCS_ORIGIN"][i]!),
      ),
    ),
    argon2,
    bootstrap: bootstrapEmail && bootstrapPassword ? { email: bootstrapEmail, password: bootstrapPassword } : null,
    tokenSecret,
    tokenSecrets: previousTokenSecret !== null && previousTokenSecret !== tokenSecret ? [tokenSecret, previousTokenSecret] : [tokenSecret],
    dataKey,
    pseudonymSecret,
    appUrl,
    email: {
      from: emailFrom,
      providerUrl,
      apiKey: optional(env.EMAIL_PROVIDER_API_KEY),
    },
    outbound: outboundPolicy(isDevelopment, [
      BREACHED_PASSWORDS_RANGE_URL,
      ...(providerUrl ? [providerUrl] : []),
      ...(malwareScan.external ? [malwareScan.external.url] : []),
      ...oauthOutboundEntries(oauth),
      ...(oauth.providers["google-youtube"] ? [`${videoApiUrl}*`] : []),
      ...(datacite ? [`${datacite.apiUrl}/dois`, `${datacite.apiUrl}/dois/*`] : []),
    ]),
    malwareScan,
    oauth,
    videoPlatform: { apiUrl: videoApiUrl, timeoutMs: positiveInt(env.VIDEO_PLATFORM_TIMEOUT_MS, "VIDEO_PLATFORM_TIMEOUT_MS", 10_000) },
    rateLimitsEnabled: flag(env.RATE_LIMITS_ENABLED, "RATE_LIMITS_ENABLED", true),
    rateLimitStoreTimeoutMs: positiveInt(
      env.RATE_LIMIT_STORE_TIMEOUT_MS,
      "RATE_LIMIT_STORE_TIMEOUT_MS",
      LIMITER_TIMEOUT_MS.failOpen,
      30_000,
    ),
    contributorTermsVersion: positiveInt(env.CONTRIBUTOR_TERMS_VERSION, "CONTRIBUTOR_TERMS_VERSION", 1, 1_000_000),
    releaseBuildSliceMs: positiveInt(env.RELEASE_BUILD_SLICE_MS, "RELEASE_BUILD_SLICE_MS", 60_000, 600_000),
    releaseAuthorship: parseAuthorship(env),
    datacite,
    oaiAdminEmail: parseAdminEmail(optional(env.OAI_ADMIN_EMAIL) ?? emailFrom),
    backup: {
      cron: env.BACKUP_CRON === undefined ? DEFAULT_BACKUP_CRON : optional(env.BACKUP_CRON),
      retentionDays: positiveInt(env.BACKUP_RETENTION_DAYS, "BACKUP_RETENTION_DAYS", 30, 3650),
      sliceMs: positiveInt(env.BACKUP_SLICE_MS, "BACKUP_SLICE_MS", 60_000, 600_000),
    },
    releaseSnapshotRecords: positiveInt(env.RELEASE_SNAPSHOT_RECORDS, "RELEASE_SNAPSHOT_RECORDS", 10_000, 200_000),
    deletionSliceRecords: positiveInt(env.DELETION_SLICE_RECORDS, "DELETION_SLICE_RECORDS", 2_000, 50_000),
    deletionRunMs: positiveInt(env.DELETION_RUN_MS, "DELETION_RUN_MS", 20_000, 600_000),
  };
}

/** The DataCite repository, or null when its prefix or credentials are unset. */
function parseDataCite(env: Env): DataCiteConfig | null {
  const prefix = optional(env.DATACITE_PREFIX);
  const repositoryId = optional(env.DATACITE_REPOSITORY_ID);
  const password = optional(env.DATACITE_PASSWORD);
  if (prefix === null || repositoryId === null || password === null) return null;
  if (!/^10\.\d{4,9}$/.test(prefix)) throw new ConfigError("DATACITE_PREFIX must be a DOI prefix such as 10.1234");
  const apiUrl = httpUrl(optional(env.DATACITE_API_URL) ?? DATACITE_API_URL, "DATACITE_API_URL");
  if (new URL(apiUrl).search !== "") throw new ConfigError("DATACITE_API_URL must not have a query");
  return {
    apiUrl,
    prefix,
    repositoryId,
    password,
    timeoutMs: positiveInt(env.DATACITE_TIMEOUT_MS, "DATACITE_TIMEOUT_MS", 10_000, 60_000),
  };
}

const ROR_URL = /^https:\/\/ror\.org\/0[0-9a-hj-km-np-tv-z]{6}[0-9]{2}$/;

function parseAuthorship(env: Env): ReleaseAuthorship {
  const publisher = optional(env.RELEASE_PUBLISHER) ?? "relab";
  const creator = optional(env.RELEASE_CREATOR);
  const creatorRor = optional(env.RELEASE_CREATOR_ROR);
  for (const [name, value] of [
    ["RELEASE_PUBLISHER", publisher],
    ["RELEASE_CREATOR", creator],
  ] as const) {
    if (value !== null && (value.length > 200 || /[\u0000-\u001F]/.test(value))) {
      throw new ConfigError(`${name} must be one line of at most 200 characters`);
    }
  }
  if (creatorRor !== null && !ROR_URL.test(creatorRor)) {
    throw new ConfigError("RELEASE_CREATOR_ROR must be a ROR id as a URL, such as https://ror.org/05xg72x27");
  }
  return { publisher, creator, creatorRor };
}

/** The address in `value`, which may be `Name <address>` as EMAIL_FROM is. */
function parseAdminEmail(value: string): string {
  const address = /<([^<>\s]+@[^<>\s]+)>\s*$/.exec(value)?.[1] ?? value.trim();
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(address)) throw new ConfigError("OAI_ADMIN_EMAIL (or EMAIL_FROM) must hold an email address");
  return address;
}

/**
 * The data-key ring and the pseudonym secret (decisions.md, Key rotation). `DATA_ENCRYPTION_KEY`
 * alone is key id 0; with `DATA_ENCRYPTION_KEYS` too, it joins the ring as key id 0 unless the
 * list names id 0 itself (then both must be the same key). Without key id 0 in the ring,
 * `PSEUDONYM_KEY` must be set: pseudonyms would otherwise change, or could not be made.
 */
function parseDataKeys(env: Env): { dataKey: DataKeyRing; pseudonymSecret: Uint8Array } {
  const single = optional(env.DATA_ENCRYPTION_KEY);
  const list = optional(env.DATA_ENCRYPTION_KEYS);
  const keyMessage = "must be 32 random bytes, as 64 hex characters or base64";
  let keyZero: Uint8Array | null = null;
  if (single !== null) {
    try {
      keyZero = parseDataKey(single);
    } catch {
      throw new ConfigError("DATA_ENCRYPTION_KEY must be set to 32 random bytes, as 64 hex characters or base64");
    }
  }
  let ring: DataKeyRing;
  if (list === null) {
    if (keyZero === null) throw new ConfigError("DATA_ENCRYPTION_KEY must be set to 32 random bytes, as 64 hex characters or base64");
    ring = { current: 0, keys: new Map([[0, keyZero]]) };
  } else {
    let parsed: ReturnType<typeof parseKeyList>;
    try {
      parsed = parseKeyList(list);
    } catch (error) {
      throw new ConfigError(`DATA_ENCRYPTION_KEYS must be id:key,id:key,... (${(error as Error).message})`);
    }
    if (keyZero !== null) {
      const listed = parsed.keys.get(0);
      if (listed && !sameBytes(listed, keyZero)) {
        throw new ConfigError("DATA_ENCRYPTION_KEYS names key id 0 with another key than DATA_ENCRYPTION_KEY");
      }
      if (!listed) parsed.keys.set(0, keyZero);
    }
    ring = parsed;
  }
  const pseudonym = optional(env.PSEUDONYM_KEY);
  if (pseudonym !== null) {
    try {
      return { dataKey: ring, pseudonymSecret: parseDataKey(pseudonym) };
    } catch {
      throw new ConfigError(`PSEUDONYM_KEY ${keyMessage}`);
    }
  }
  const zero = ring.keys.get(0);
  if (!zero) {
    throw new ConfigError(
      "PSEUDONYM_KEY must be set when data key id 0 is not configured: release pseudonyms are derived from it (set it to the retired key 0)",
    );
  }
  return { dataKey: ring, pseudonymSecret: zero };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function outboundPolicy(isDevelopment: boolean, entries: string[]): OutboundPolicy {
  try {
    return createOutboundPolicy(entries, { loopbackHttp: isDevelopment });
  } catch (error) {
    throw new ConfigError(
      `EMAIL_PROVIDER_URL, MALWARE_SCANNER_URL, DATACITE_API_URL or an OAUTH_* endpoint is not a plain https URL (${(error as Error).message})`,
    );
  }
}

function parseMalwareScan(env: Env): MalwareScanConfig {
  let extra: Signature[];
  try {
    extra = parseSignatures(env.MALWARE_SIGNATURES);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const url = optional(env.MALWARE_SCANNER_URL);
  return {
    signatures: [...BUILT_IN_SIGNATURES, ...extra],
    external: url
      ? {
          url,
          token: optional(env.MALWARE_SCANNER_TOKEN),
          timeoutMs: positiveInt(env.MALWARE_SCANNER_TIMEOUT_MS, "MALWARE_SCANNER_TIMEOUT_MS", DEFAULT_SCAN_TIMEOUT_MS),
        }
      : null,
  };
}

function httpUrl(value: string | undefined, name: string): string {
  const trimmed = value?.trim();
  if (!trimmed) throw new ConfigError(`${name} must be set`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ConfigError(`${name} must be an http(s) URL`);
  return url.href.replace(/\/+$/, "");
}

/** A `true`/`false` variable (case-insensitive); unset or blank is `fallback`. For plugins' own settings too. */
export function flag(value: string | undefined, name: string, fallback: boolean): boolean {
  const trimmed = value?.trim().toLowerCase();
  if (!trimmed) return fallback;
  if (trimmed === "true") return true;
  if (trimmed === "false") return false;
  throw new ConfigError(`${name} must be "true" or "false"`);
}

function optional(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** A positive integer variable, at most `max`; unset or blank is `fallback`. For plugins' own settings too. */
export function positiveInt(value: string | undefined, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value.trim() === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new ConfigError(`${name} must be a positive integer`);
  }
  if (parsed > max) throw new ConfigError(`${name} must be at most ${max}`);
  return parsed;
}

/** A variable may hold one origin or a comma-separated list; each is normalised to scheme://host[:port]. */
function originList(value: string | undefined, name: string): string[] {
  if (!value) return [];
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new ConfigError(`${name} holds an entry that is not a URL`);
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") {
        throw new ConfigError(`${name} entries must be http(s) origins`);
      }
      return url.origin;
    });
}
