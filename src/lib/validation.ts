import type { z } from "@hono/zod-openapi";
import { ApiError, type FieldError } from "./problem";

/** Where a validator looked: the body, or one of the parameter locations. */
export type ValidationTarget = "json" | "form" | "query" | "param" | "header" | "cookie";

const PARAM_PREFIX: Record<Exclude<ValidationTarget, "json" | "form">, string> = {
  query: "#/query",
  param: "#/path",
  header: "#/header",
  cookie: "#/cookie",
};

function escapeToken(token: PropertyKey): string {
  return String(token).replaceAll("~", "~0").replaceAll("/", "~1");
}

/** A JSON Pointer into the body (`/a/0/b`), or `#/query/<name>` style for parameters. */
export function pointerFor(target: ValidationTarget, path: readonly PropertyKey[]): string {
  const tail = path.map((token) => `/${escapeToken(token)}`).join("");
  if (target === "json" || target === "form") return tail;
  return `${PARAM_PREFIX[target]}${tail}`;
}

/** Turns zod issues into one error per offending location; unknown members get one entry each. */
export function fieldErrors(target: ValidationTarget, issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        errors.push({
          pointer: pointerFor(target, [...issue.path, key]),
          detail: "Unknown or read-only member; it cannot be set here.",
        });
      }
      continue;
    }
    const missing = issue.code === "invalid_type" && /received undefined/.test(issue.message);
    errors.push({
      pointer: pointerFor(target, issue.path),
      detail: missing ? "This member is required." : issue.message,
    });
  }
  return errors;
}

/** The 422 error for failed request validation. */
export function validationError(target: ValidationTarget, issues: readonly z.core.$ZodIssue[]): ApiError {
  return new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request did not pass validation.",
    errors: fieldErrors(target, issues),
  });
}
