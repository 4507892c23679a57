import { normalizeEmail } from "../../lib/email-address";
import { isoSeconds } from "../../lib/time";

export interface OutboxItem {
  to: string;
  subject: string;
  text: string;
  created_at: string;
}

const PREFIX = "dev-outbox:";
const TTL_SECONDS = 7 * 24 * 3600;
const LIST_LIMIT = 100;
// Keys sort ascending, so a count-down timestamp lists the newest message first.
const EPOCH_CEILING = 10 ** 13;
let sequence = 0;

function keyPrefix(to: string): string {
  return `${PREFIX}${normalizeEmail(to)}:`;
}

/** Keeps a message in the development outbox (KV, 7 days). */
export async function storeInOutbox(kv: KVNamespace, message: { to: string; subject: string; text: string }): Promise<OutboxItem> {
  const now = Date.now();
  sequence = (sequence + 1) % 1_000_000;
  const countdown = String(EPOCH_CEILING - now).padStart(13, "0");
  const tiebreak = String(999_999 - sequence).padStart(6, "0");
  const item: OutboxItem = { ...message, created_at: isoSeconds(now) };
  await kv.put(`${keyPrefix(message.to)}${countdown}:${tiebreak}`, JSON.stringify(item), {
    expirationTtl: TTL_SECONDS,
  });
  return item;
}

/** Messages sent to `to`, newest first (at most 100). */
export async function listOutbox(kv: KVNamespace, to: string): Promise<OutboxItem[]> {
  const listed = await kv.list({ prefix: keyPrefix(to), limit: LIST_LIMIT });
  const values = await Promise.all(listed.keys.map((key) => kv.get<OutboxItem>(key.name, "json")));
  return values.filter((item): item is OutboxItem => item !== null);
}
