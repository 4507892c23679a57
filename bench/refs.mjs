// Builds the worker of another commit, for measurements side by side with the working tree
// (bench/mixed.mjs against the start of the last round, bench/paths.mjs against main): its files
// as `git archive` has them, in bench/.refs/<commit>/src, with this tree's node_modules linked in
// (the commits compared pin the same versions of everything both use), bundled as `npm run bench`
// bundles (wrangler deploy --dry-run). Kept between runs: a commit never changes.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { unstable_readConfig } from "wrangler";
import { buildWorker } from "./targets.mjs";

/** The commit a ref names (full id). */
export function resolveRef(root, ref) {
  return execFileSync("git", ["-C", root, "rev-parse", `${ref}^{commit}`], { encoding: "utf8" }).trim();
}

/** `{ commit, dir, bundle, config, migrations }` of `ref`, built once into bench/.refs/<commit>. */
export async function buildRef(root, ref, log = () => {}) {
  const commit = resolveRef(root, ref);
  const base = path.join(root, "bench/.refs", commit.slice(0, 12));
  const dir = path.join(base, "src");
  const out = path.join(base, "build");
  if (!existsSync(path.join(out, "index.js"))) {
    log(`building ${ref} (${commit.slice(0, 12)}) into ${path.relative(root, base)}`);
    mkdirSync(dir, { recursive: true });
    execFileSync("sh", ["-c", `git -C "${root}" archive ${commit} | tar -x -C "${dir}"`]);
    if (!existsSync(path.join(dir, "node_modules"))) symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  }
  // Named explicitly: from inside this tree wrangler would find its redirected configuration first.
  const file = ["wrangler.jsonc", "wrangler.toml"].map((name) => path.join(dir, name)).find((candidate) => existsSync(candidate));
  if (!existsSync(path.join(out, "index.js"))) await buildWorker(dir, out, file);
  return {
    commit,
    dir,
    bundle: path.join(out, "index.js"),
    config: unstable_readConfig({ config: file }, {}),
    migrations: path.join(dir, "migrations"),
  };
}
