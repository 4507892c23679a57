// Copies the docs page's Swagger UI files from node_modules into the Workers static-assets
// directory (wrangler.jsonc `assets`), so the page needs no third-party origin. The files land
// under the same path the Worker serves them at (src/routes/docs), versioned, so they can be
// cached as immutable. wrangler runs this as its build command (dev, deploy, the bench's dry
// run); vitest.config.ts calls it too. Idempotent: unchanged files are left alone.
//
//   node scripts/build-docs-assets.mjs
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The `assets.directory` of wrangler.jsonc. */
export const ASSETS_DIR = "build/assets";

// What the page loads, plus the licence texts that must travel with a redistributed copy.
const FILES = ["swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css", "favicon-32x32.png", "LICENSE", "NOTICE"];

/** Copies the files (when changed) and removes anything else from the assets directory; returns the version directory. */
export function buildDocsAssets(root = ROOT) {
  const source = path.join(root, "node_modules/swagger-ui-dist");
  const { version } = JSON.parse(readFileSync(path.join(source, "package.json"), "utf8"));
  const chain = ["v1", "docs", "assets", `swagger-ui-${version}`];
  const target = path.join(root, ASSETS_DIR, ...chain);
  mkdirSync(target, { recursive: true });
  let copied = 0;
  for (const file of FILES) {
    const bytes = readFileSync(path.join(source, file));
    const destination = path.join(target, file);
    if (existsSync(destination) && readFileSync(destination).equals(bytes)) continue;
    writeFileSync(destination, bytes);
    copied++;
  }
  // Nothing else stays: an older version's files left behind would still be served.
  let dir = path.join(root, ASSETS_DIR);
  for (const name of chain) {
    removeAllBut(dir, [name]);
    dir = path.join(dir, name);
  }
  removeAllBut(target, FILES);
  return { directory: path.relative(root, target), version, copied };
}

function removeAllBut(dir, names) {
  for (const entry of readdirSync(dir)) {
    if (!names.includes(entry)) rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { directory, copied } = buildDocsAssets();
  if (copied > 0) console.log(`Docs assets: ${copied} file(s) copied to ${directory}`);
}
