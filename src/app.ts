import { registerSecuritySchemes, registerTags } from "./lib/openapi";
import { type AppOpenAPI, createRouter } from "./lib/router";
import { adminOnly } from "./middleware/admin-only";
import { authFlow } from "./middleware/auth-flow";
import { bodyLimit } from "./middleware/body-limit";
import { ensureBootstrap } from "./middleware/bootstrap";
import { cors } from "./middleware/cors";
import { crossSiteProtection } from "./middleware/cross-site";
import { createNotFoundHandler, onError } from "./middleware/error-handler";
import { jsonDepthGuard } from "./middleware/json-depth";
import { requestContext } from "./middleware/request-context";
import { requestServices } from "./middleware/request-services";
import { securityHeaders } from "./middleware/security-headers";
import { enabledPlugins, type Plugin } from "./plugin";
import { INSTALLED_PLUGINS } from "./plugins/installed";
import { requestRateLimits } from "./rate-limits/middleware";
import { adminRouter } from "./routes/admin/admin.index";
import { authRouter } from "./routes/auth/auth.index";
import { categoriesRouter } from "./routes/categories/categories.index";
import { devRouter } from "./routes/dev/dev.index";
import { createDocsRouter } from "./routes/docs/docs.index";
import { healthRouter } from "./routes/health/health.index";
import { materialsRouter } from "./routes/materials/materials.index";
import { oaiPmhRouter } from "./routes/oai-pmh/oai-pmh.index";
import { oauthRouter } from "./routes/oauth/oauth.index";
import { productTypesRouter } from "./routes/product-types/product-types.index";
import { componentsTreeRouter } from "./routes/products/components/components.index";
import { productExportRouter } from "./routes/products/export/export.index";
import { productFacetsRouter } from "./routes/products/facets/facets.index";
import { billOfMaterialsRouter } from "./routes/products/materials/materials.index";
import { mediaRouter } from "./routes/products/media/media.index";
import { productsRouter } from "./routes/products/products.index";
import { qualityRouter } from "./routes/products/quality/quality.index";
import { videosRouter } from "./routes/products/videos/videos.index";
import { profilesRouter } from "./routes/profiles/profiles.index";
import { releasesRouter } from "./routes/releases/releases.index";
import { rootRouter } from "./routes/root/root.index";
import { statsRouter } from "./routes/stats/stats.index";
import { taxonomiesRouter } from "./routes/taxonomies/taxonomies.index";
import { unitsRouter } from "./routes/units/units.index";
import { uploadsRouter } from "./routes/uploads/uploads.index";
import { contributorTermsRouter } from "./routes/users/contributor-terms/contributor-terms.index";
import { accountDeletionRouter } from "./routes/users/deletion/deletion.index";
import { usersRouter } from "./routes/users/users.index";

/**
 * The Worker's app with the routes of `plugins` (the enabled ones) mounted: middleware order,
 * core routers, plugin routers, the error and not-found handlers. The not-found handler and the
 * OpenAPI document know only the routes mounted here, so a plugin switched off answers the ordinary
 * 404 and is absent from the schema.
 */
export function createApp(plugins: readonly Plugin[]): AppOpenAPI {
  const app = createRouter({ dispatches: true });

  // Outermost first. requestContext and securityHeaders cannot fail, so even an error raised by
  // a later middleware gets the request id and the security headers.
  app.use(requestContext);
  app.use(securityHeaders);
  app.use(requestServices(INSTALLED_PLUGINS));
  app.use(cors);
  // Counted before any other check, so refused and malformed requests count too.
  app.use("/v1/*", requestRateLimits);
  app.use("/v1/*", crossSiteProtection);
  app.use(bodyLimit);
  app.use("/v1/*", jsonDepthGuard);

  // The probes answer even when bootstrap cannot run (a database outage is /health's to report).
  app.use("/live", ensureBootstrap({ bestEffort: true }));
  app.use("/health", ensureBootstrap({ bestEffort: true }));
  app.route("/", healthRouter);
  app.route("/", rootRouter);
  app.use("/v1/auth/*", authFlow);
  app.use("/v1/users/me", authFlow);
  app.use("/v1/oauth/*", authFlow);
  app.use(ensureBootstrap());
  app.use("/v1/admin/*", adminOnly);

  app.route("/v1", createDocsRouter(app));
  app.route("/v1", authRouter);
  app.route("/v1", oauthRouter);
  app.route("/v1", usersRouter);
  app.route("/v1", accountDeletionRouter);
  app.route("/v1", contributorTermsRouter);
  app.route("/v1", profilesRouter);
  app.route("/v1", adminRouter);
  app.route("/v1", unitsRouter);
  app.route("/v1", taxonomiesRouter);
  app.route("/v1", categoriesRouter);
  app.route("/v1", materialsRouter);
  app.route("/v1", productTypesRouter);
  app.route("/v1", statsRouter);
  app.route("/v1", releasesRouter);
  app.route("/v1", oaiPmhRouter);
  // Facets, suggestions and the export first: /v1/products/facets must not be read as /v1/products/{id}.
  app.route("/v1", productFacetsRouter);
  app.route("/v1", productExportRouter);
  app.route("/v1", productsRouter);
  app.route("/v1", componentsTreeRouter);
  app.route("/v1", qualityRouter);
  app.route("/v1", billOfMaterialsRouter);
  app.route("/v1", mediaRouter);
  app.route("/v1", videosRouter);
  for (const plugin of plugins) {
    plugin.routes(app);
    registerTags(app, plugin.openApiTags ?? []);
  }
  app.route("/", uploadsRouter);
  app.route("/__dev", devRouter);

  registerSecuritySchemes(app);
  app.onError(onError);
  app.notFound(createNotFoundHandler(app.routes));
  return app;
}

/** The app with every installed plugin: what a deployment with the default configuration serves. */
export const app = createApp(INSTALLED_PLUGINS);

const apps = new Map<string, AppOpenAPI>([[INSTALLED_PLUGINS.map((plugin) => plugin.name).join(","), app]]);

// The runtime hands every request of an isolate the same `env`: its app is looked up once.
const appsByEnv = new WeakMap<Env, AppOpenAPI>();

/** The app of the plugins `env` enables, built once per set of plugins per isolate. */
export function appFor(env: Env): AppOpenAPI {
  const known = appsByEnv.get(env);
  if (known) return known;
  let enabled: readonly Plugin[];
  try {
    enabled = enabledPlugins(INSTALLED_PLUGINS, env);
  } catch {
    // A bad plugin switch: the request's services refuse it with the ConfigError (a 500 that names it).
    return app;
  }
  const key = enabled.map((plugin) => plugin.name).join(",");
  let chosen = apps.get(key);
  if (!chosen) {
    chosen = createApp(enabled);
    apps.set(key, chosen);
  }
  appsByEnv.set(env, chosen);
  return chosen;
}
