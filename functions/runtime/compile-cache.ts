/**
 * The V8 code cache of a function's start, which the entry point turns on (main.ts): the framework
 * and each function's bundle, compiled here once as a start compiles them, and kept beside them.
 * V8 keys the cache by the files' paths, so it is filled where they run: by npm run build for
 * dist/functions, and in the image at its own paths (Dockerfile).
 */
import { chmodSync, existsSync, readdirSync, statSync } from "node:fs";
import { enableCompileCache, flushCompileCache } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The cache's directory, relative to the entry point and the bundles. */
export const COMPILE_CACHE = "./.compile-cache/";

/** Fills the cache of the bundles in `functions` (a directory's URL), and answers how many modules it compiled. */
export async function fillCompileCache(functions: URL): Promise<number> {
  const dir = fileURLToPath(new URL(COMPILE_CACHE, functions));
  const enabled = enableCompileCache(dir);
  if (enabled.directory === undefined) throw new Error(`the compile cache cannot be kept in ${dir}: ${enabled.message}`);
  const root = fileURLToPath(functions);
  const bundles = ["framework.mjs", ...readdirSync(root).filter((name) => existsSync(join(root, name, "index.mjs"))).map((name) => `${name}/index.mjs`)];
  // Evaluating a bundle only registers its function: nothing connects before the entry point listens.
  for (const bundle of bundles) await import(new URL(bundle, functions).href);
  flushCompileCache();
  readableByAll(dir);
  return bundles.length;
}

/** Node writes the cache for its own user only; the functions may run as another (the image's node user). */
function readableByAll(path: string): void {
  const directory = statSync(path).isDirectory();
  chmodSync(path, directory ? 0o755 : 0o644);
  if (directory) for (const name of readdirSync(path)) readableByAll(join(path, name));
}
