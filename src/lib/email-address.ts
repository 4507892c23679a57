/** Trimmed, lower-cased address: the stored form, so uniqueness is case-insensitive. */
export function normalizeEmail(address: string): string {
  return address.trim().toLowerCase();
}

const GMAIL_DOMAINS = new Set(["gmail.com", "googlemail.com"]);

/**
 * The mailbox an address delivers to, for uniqueness: `+tag` suffixes are dropped for every
 * domain, and for Gmail the dots of the local part too (and googlemail.com is gmail.com).
 */
export function canonicalEmail(address: string): string {
  const normalized = normalizeEmail(address);
  const at = normalized.lastIndexOf("@");
  if (at < 1) return normalized;
  let local = normalized.slice(0, at);
  let domain = normalized.slice(at + 1);
  local = local.split("+", 1)[0] || local;
  if (GMAIL_DOMAINS.has(domain)) {
    local = local.replaceAll(".", "");
    domain = "gmail.com";
  }
  return `${local}@${domain}`;
}

/** What a sign-in identifier names: a mailbox, by its canonical address, or a username, lower-cased. */
export function loginIdentifier(identifier: string): { kind: "email" | "username"; key: string } {
  const trimmed = identifier.trim();
  return trimmed.includes("@") ? { kind: "email", key: canonicalEmail(trimmed) } : { kind: "username", key: trimmed.toLowerCase() };
}
