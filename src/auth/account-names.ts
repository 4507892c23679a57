import { DISPOSABLE_DOMAINS } from "../data/disposable-domains";

export const USERNAME_PATTERN = /^[a-z0-9_]{2,50}$/;

/** Usernames that would collide with routes, roles or the service's own voice. */
const RESERVED_USERNAMES = new Set([
  "admin",
  "administrator",
  "api",
  "app",
  "anonymous",
  "auth",
  "deleted",
  "docs",
  "help",
  "info",
  "login",
  "logout",
  "me",
  "mod",
  "moderator",
  "null",
  "oauth",
  "postmaster",
  "profile",
  "profiles",
  "register",
  "relab",
  "root",
  "security",
  "settings",
  "signup",
  "staff",
  "support",
  "superuser",
  "system",
  "undefined",
  "user",
  "users",
  "webmaster",
  "www",
]);

/** Why a username is refused, or null when it may be used. */
export function usernameViolation(username: string): string | null {
  if (!USERNAME_PATTERN.test(username)) {
    return "Username must be 2 to 50 characters of lower-case letters, digits and underscores.";
  }
  if (RESERVED_USERNAMES.has(username)) return "This username is reserved.";
  return null;
}

let disposable: Set<string> | undefined;

/** Whether an address belongs to a disposable-email domain (the domain itself or any parent). */
export function isDisposableEmail(address: string): boolean {
  disposable ??= new Set(DISPOSABLE_DOMAINS.split("\n"));
  const domain = address.toLowerCase().split("@").pop() ?? "";
  const labels = domain.split(".");
  for (let i = 0; i < labels.length - 1; i++) {
    if (disposable.has(labels.slice(i).join("."))) return true;
  }
  return false;
}
