import type { AppConfig } from "../config";
import { COMMON_PASSWORDS } from "../data/common-passwords";
import type { Logger } from "../lib/logger";
import { ApiError, type FieldError } from "../lib/problem";
import { isBreachedPassword } from "./breached-passwords";

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 128;

let common: Set<string> | undefined;

/**
 * Whether the password, lower-cased, is on the list: the corpus's passwords that pass the length
 * rule, under the same lower-casing (docs/data-lists.md). The set is built once per isolate.
 */
function isCommonPassword(password: string): boolean {
  common ??= new Set(COMMON_PASSWORDS.split("\n"));
  return common.has(password.toLowerCase());
}

/**
 * The password rules that need no network: length (in characters, not UTF-16 units), the
 * username or the email's local part inside it (case-insensitively), and the common-password
 * list. Returns the first rule broken, as a message, or null.
 */
export function passwordRuleViolation(password: string, identity: { username: string; email: string }): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `Password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (length > PASSWORD_MAX_LENGTH) return `Password must be at most ${PASSWORD_MAX_LENGTH} characters long.`;
  const lower = password.toLowerCase();
  if (identity.username && lower.includes(identity.username.toLowerCase())) {
    return "Password must not contain the username.";
  }
  const local = identity.email.toLowerCase().split("@", 1)[0] ?? "";
  if (local && lower.includes(local)) return "Password must not contain the email address.";
  if (isCommonPassword(password)) return "Password is too common; choose one that is harder to guess.";
  return null;
}

function passwordError(pointer: string, detail: string): ApiError {
  const errors: FieldError[] = [{ pointer, detail }];
  return new ApiError(422, { code: "PASSWORD_REJECTED", detail, errors });
}

/**
 * Applies every password rule, the breach check last (it is the only one that costs a network
 * call); throws a 422 pointing at `pointer` naming the rule that failed.
 */
export async function assertAcceptablePassword(
  config: AppConfig,
  log: Logger,
  password: string,
  identity: { username: string; email: string },
  pointer = "/password",
): Promise<void> {
  const violation = passwordRuleViolation(password, identity);
  if (violation) throw passwordError(pointer, violation);
  if (await isBreachedPassword(config, log, password)) {
    throw passwordError(pointer, "Password appears in a known data breach; choose another one.");
  }
}
