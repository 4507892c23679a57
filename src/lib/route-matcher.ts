interface RouteEntry {
  method: string;
  path: string;
}

interface CompiledRoute {
  method: string;
  path: string;
  pattern: RegExp;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

/** Hono path syntax (`/a/:id`, `/a/:id{[0-9]+}`, `/a/:id?`, `/a/*`) to an anchored regular expression. */
export function compilePath(path: string): RegExp {
  const source = path
    .split("/")
    .slice(1)
    .map((segment) => {
      if (segment === "*") return "(?:/.*)?";
      const param = /^:[A-Za-z0-9_]+(?:\{(.+)\})?(\?)?$/.exec(segment);
      if (!param) return `/${escapeRegExp(segment)}`;
      const value = param[1] ? `(?:${param[1]})` : "[^/]+";
      return param[2] ? `(?:/${value})?` : `/${value}`;
    })
    .join("");
  return new RegExp(`^${source || "/"}$`);
}

/**
 * Answers which methods a path supports, from a Hono app's route table, so that an unmatched
 * request can be told 405 with `Allow` rather than 404. Middleware entries (method ALL) do not count.
 */
export function createMethodLookup(routes: readonly RouteEntry[]) {
  let compiled: CompiledRoute[] | null = null;
  return (path: string): string[] => {
    compiled ??= routes
      .filter((route) => route.method !== "ALL")
      .map((route) => ({ method: route.method, path: route.path, pattern: compilePath(route.path) }));
    const methods = new Set<string>();
    for (const route of compiled) {
      if (route.pattern.test(path)) methods.add(route.method);
    }
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
}
