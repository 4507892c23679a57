import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeCloudflareApi, startFakeCloudflareApi } from "./support/fake-cloudflare-api.ts";

// `npm run setup:production` against a fake of Cloudflare's API (wrangler honours
// CLOUDFLARE_API_BASE_URL): the real script, and the real wrangler it runs. Slow tier: the two
// runs start wrangler 16 times (about 25 s of CPU on this machine).

const ROOT = path.resolve(import.meta.dirname, "../..");
const QUEUES = ["relab-media", "relab-media-dlq", "relab-events", "relab-releases", "relab-maintenance", "relab-deletions"];
const REQUIRED = [
  "AUTH_TOKEN_SECRET",
  "DATA_ENCRYPTION_KEY",
  "BOOTSTRAP_SUPERUSER_EMAIL",
  "BOOTSTRAP_SUPERUSER_PASSWORD",
  "EMAIL_PROVIDER_API_KEY",
];

let api: FakeCloudflareApi | null = null;
const running = new Set<ReturnType<typeof spawn>>();
afterEach(async () => {
  // A run still going (the test timed out) goes with its process group: the script and its wranglers.
  for (const child of running) if (child.pid) process.kill(-child.pid, "SIGTERM");
  running.clear();
  await api?.close();
  api = null;
});

function setup(fake: FakeCloudflareApi, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts/setup-production.mjs"), ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        CLOUDFLARE_API_BASE_URL: fake.url,
        CLOUDFLARE_API_TOKEN: fake.token,
        CLOUDFLARE_ACCOUNT_ID: fake.accountId,
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

const created = (fake: FakeCloudflareApi) =>
  fake
    .writes()
    .map((call) => `${call.method} ${call.path.replace(/^\/client\/v4\/accounts\/[0-9a-f]+/, "")} ${JSON.stringify(call.body)}`)
    .sort();

/** FAKE_CLOUDFLARE_PORT: a fixed port for the fake (default: any free one). */
const port = Number(process.env.FAKE_CLOUDFLARE_PORT ?? 0);

describe("npm run setup:production", () => {
  it("creates what is missing once and keeps what exists, lists the secrets with their commands, and the second run has nothing to do", async () => {
    // The account already has the bucket and one queue: those stay as they are.
    const fake = (api = await startFakeCloudflareApi({
      port,
      state: {
        r2: [{ name: "relab-uploads", creation_date: "2025-01-01T00:00:00Z" }],
        queues: [
          { queue_id: "0".repeat(32), queue_name: "relab-events", created_on: "2025-01-01T00:00:00Z", modified_on: "2025-01-01T00:00:00Z" },
        ],
      },
    }));
    const first = await setup(fake);
    expect(first.code, first.stderr).toBe(0);
    expect(fake.unhandled).toEqual([]);
    expect(created(fake)).toEqual(
      [
        'POST /d1/database {"name":"relab"}',
        ...QUEUES.filter((q) => q !== "relab-events").map((queue) => `POST /queues {"queue_name":"${queue}"}`),
      ].sort(),
    );
    expect(fake.state.d1.map((db) => db.name)).toEqual(["relab"]);
    expect(fake.state.r2.map((bucket) => bucket.creation_date)).toEqual(["2025-01-01T00:00:00Z"]);
    expect(fake.state.queues.map((q) => q.queue_name).sort()).toEqual([...QUEUES].sort());
    expect(first.stdout).toMatch(/R2 bucket relab-uploads\s+exists/);
    expect(first.stdout).toMatch(/Queue relab-events\s+exists/);
    expect(first.stdout).toMatch(/Queue relab-maintenance\s+created/);
    // The KV namespace is the first deploy's to create; no secret is ever written.
    expect(fake.state.kv).toEqual([]);
    expect(first.stdout).toMatch(/KV namespace \(binding KV\)\s+the first `npm run deploy` creates it \("relab-api-kv"\)/);
    for (const name of REQUIRED) expect(first.stdout).toContain(`wrangler secret put ${name} --env production`);
    expect(first.stdout).toContain("openssl rand -hex 32 | npx wrangler secret put AUTH_TOKEN_SECRET --env production");
    expect(first.stdout).not.toContain("Nothing to do");

    // The operator sets the secrets and deploys (which creates the Worker); a second run changes nothing.
    fake.state.scripts["relab-api"] = { secrets: [...REQUIRED] };
    const writesBefore = fake.writes().length;
    const second = await setup(fake);
    expect(second.code, second.stderr).toBe(0);
    expect(fake.writes().length).toBe(writesBefore);
    expect(fake.unhandled).toEqual([]);
    expect(second.stdout).toContain("Nothing to do");
    expect(second.stdout).not.toMatch(/\bcreated\b/);
    expect(second.stdout).toMatch(/KV namespace \(binding KV\)\s+the deployed Worker's/);
  });
});
