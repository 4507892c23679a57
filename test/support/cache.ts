import { env } from "cloudflare:workers";
import { bearer } from "./accounts";
import { api } from "./http";
import { bootstrapAdmin } from "./mfa";

/** `POST /v1/admin/cache/clear/{namespace}` as the bootstrap superuser. */
export async function clearCache(namespace: string): Promise<Response> {
  const admin = await bootstrapAdmin();
  return api(`/v1/admin/cache/clear/${namespace}`, { method: "POST", headers: bearer(admin.tokens.access_token) });
}

/** Every KV key under `prefix`, following the list cursor. */
export async function keysUnder(prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await env.KV.list({ prefix, ...(cursor === undefined ? {} : { cursor }) });
    names.push(...page.keys.map((key) => key.name));
    if (page.list_complete) return names;
    cursor = page.cursor;
  }
}

/** Writes `keys` to KV, a hundred at a time. */
export async function seedKeys(keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 100) {
    await Promise.all(keys.slice(i, i + 100).map((key) => env.KV.put(key, "cached")));
  }
}
