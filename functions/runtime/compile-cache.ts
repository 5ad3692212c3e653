/**
 * The V8 code cache of a function's start (the framework and the bundle), filled where and as whom
 * the bundles run: Node keys it by the files' paths and keeps it per user.
 */
import { existsSync, readdirSync } from "node:fs";
import { constants, enableCompileCache, flushCompileCache } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The cache's directory, relative to the entry point and the bundles: filled by npm run build for
 * dist/functions, and in the image at its own paths as its own user (Dockerfile).
 */
export const COMPILE_CACHE = "./.compile-cache/";

/** Fills the cache of the bundles in `functions` (a directory's URL), and answers how many modules it compiled. */
export async function fillCompileCache(functions: URL): Promise<number> {
  const dir = fileURLToPath(new URL(COMPILE_CACHE, functions));
  const enabled = enableCompileCache(dir);
  // Already on elsewhere (NODE_COMPILE_CACHE) or turned off (NODE_DISABLE_COMPILE_CACHE): filling
  // that would leave the functions' own cache empty.
  if (enabled.status !== constants.compileCacheStatus.ENABLED) {
    throw new Error(
      `the compile cache cannot be kept in ${dir}: ${enabled.message ?? `Node's is ${enabled.directory ? `in ${enabled.directory} already (NODE_COMPILE_CACHE)` : "turned off (NODE_DISABLE_COMPILE_CACHE)"}`}`,
    );
  }
  const root = fileURLToPath(functions);
  const bundles = [
    "framework.mjs",
    ...readdirSync(root)
      .filter((name) => existsSync(join(root, name, "index.mjs")))
      .map((name) => `${name}/index.mjs`),
  ];
  // Evaluating a bundle only registers its function: nothing connects before the entry point listens.
  for (const bundle of bundles) await import(new URL(bundle, functions).href);
  flushCompileCache();
  return bundles.length;
}
