import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { validationError } from "../../lib/validation";
import { CredentialsJsonSchema } from "./auth.schemas";

/**
 * The login credentials of a request that declared both a JSON and a form body: the router has
 * validated whichever the Content-Type named; a request with no body at all is a 422 here.
 */
export function readCredentials(c: Context<AppEnv, string, { out: { json: unknown; form: unknown } }>): {
  username: string;
  password: string;
} {
  const isForm = c.req.header("content-type")?.toLowerCase().startsWith("application/x-www-form-urlencoded");
  const body = (isForm ? c.req.valid("form") : c.req.valid("json")) as Record<string, unknown>;
  const parsed = CredentialsJsonSchema.safeParse({ username: body.username, password: body.password });
  if (!parsed.success) throw validationError(isForm ? "form" : "json", parsed.error.issues);
  return parsed.data;
}
