// How a function is bundled (npm run build; the bench's empty baseline too): one minified ESM
// file per entry, the Functions Framework imported from the one copy every bundle shares.
import { build, type BuildOptions, type Plugin } from "esbuild";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
/** The Functions Framework (with Express, most of a function's start), bundled once. */
export const FRAMEWORK_FILE = `${root}dist/functions/framework.mjs`;

/**
 * Resolves the framework's two entry points, in a bundle written to `outdir`, to the shared copy:
 * so the function a bundle registers is in the registry the entry point serves from.
 */
function sharedFramework(outdir: string): Plugin {
  const path = relative(outdir, FRAMEWORK_FILE);
  return {
    name: "shared framework",
    setup: (b) =>
      b.onResolve({ filter: /^@google-cloud\/functions-framework(\/testing)?$/ }, () => ({
        path: path.startsWith(".") ? path : `./${path}`,
        external: true,
      })),
  };
}

export async function bundle(label: string, options: BuildOptions): Promise<void> {
  const started = performance.now();
  const outdir = options.outdir ?? dirname(options.outfile!);
  const result = await build({
    ...options,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minify: true,
    sourcemap: false,
    metafile: true,
    plugins: options.outfile === FRAMEWORK_FILE ? [] : [sharedFramework(outdir)],
    // CommonJS dependencies call require() for Node built-ins; give the ESM bundle one.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: "warning",
  });
  const bytes = Object.entries(result.metafile.outputs)
    .filter(([f]) => f.endsWith(".mjs"))
    .map(([f, o]) => `${f.split("/").pop()} ${(o.bytes / 1024).toFixed(0)} KiB`);
  console.log(`${label}: ${bytes.join(", ")} (${Math.round(performance.now() - started)} ms)`);
}
