import { OpenAPIHono } from "@hono/zod-openapi";
import type { Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import type { AppEnv, BaseEnv } from "../env";
import { type ValidationTarget, validationError } from "./validation";

/** How many (method, path) matches the app keeps: a few hundred popular paths, a few hundred KiB. */
const REMEMBERED_MATCHES = 512;

/**
 * Hono's TrieRouter that keeps its latest matches by method and path (oldest out first). A
 * match depends on nothing else once the routes are added (none may be added after the first
 * match, as with Hono's default), and Hono only reads it. Not Hono's
 * default (RegExpRouter, falling back to TrieRouter): RegExpRouter refuses any route table with
 * a fixed segment where another route has a parameter (`/v1/products/facets` beside
 * `/v1/products/:id`, `/v1/users/me` beside `/v1/users/:user_id/products`; honojs/hono#1140), so
 * this app always ran on TrieRouter, which walks its tree on every request (bench/README.md,
 * Issue 24).
 */
export class RememberingRouter<T> implements Router<T> {
  readonly name = "RememberingRouter";
  readonly #trie = new TrieRouter<T>();
  readonly #matches = new Map<string, Result<T>>();
  #matching = false;

  add(method: string, path: string, handler: T): void {
    // As Hono's default router: a route added once requests are matched would make the kept matches wrong.
    if (this.#matching) throw new Error("Can not add a route since the matcher is already built.");
    this.#trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    this.#matching = true;
    const key = `${method} ${path}`;
    let result = this.#matches.get(key);
    if (result === undefined) {
      result = this.#trie.match(method, path);
      if (this.#matches.size >= REMEMBERED_MATCHES) this.#matches.delete(this.#matches.keys().next().value as string);
      this.#matches.set(key, result);
    }
    return result;
  }
}

/**
 * A router for one resource. Request validation failures are thrown as a 422 `ApiError`, so the
 * single error handler renders them like every other error. `dispatches`: the app itself, which
 * matches requests (a resource's router only hands its routes to the app).
 */
export function createRouter<E extends BaseEnv = AppEnv>({ dispatches = false } = {}) {
  return new OpenAPIHono<E>({
    ...(dispatches ? { router: new RememberingRouter() } : {}),
    defaultHook: (result) => {
      if (!result.success) {
        throw validationError(result.target as ValidationTarget, result.error.issues);
      }
    },
  });
}

export type AppOpenAPI = OpenAPIHono<AppEnv>;
