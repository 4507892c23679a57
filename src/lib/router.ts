import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { type ValidationTarget, validationError } from "./validation";

/**
 * A router for one resource. Request validation failures are thrown as a 422 `ApiError`, so the
 * single error handler renders them like every other error.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw validationError(result.target as ValidationTarget, result.error.issues);
      }
    },
  });
}

export type AppOpenAPI = ReturnType<typeof createRouter>;
