// Bundles each function (functions/<name>/index.ts) into one ESM file under dist/functions/<name>/,
// with @kubernetes/client-node split into a chunk that loads on the first event, not at start.
// The Functions Framework stays external: the runner's copy must be the one functions register with.
import { build } from "esbuild";
import { readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const names = readdirSync(`${root}/functions`).filter((n) => n !== "runtime" && statSync(`${root}/functions/${n}`).isDirectory());

for (const name of names) {
  const started = performance.now();
  const result = await build({
    entryPoints: [`${root}/functions/${name}/index.ts`],
    outdir: `${root}/dist/functions/${name}`,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    minify: true,
    sourcemap: false,
    metafile: true,
    external: ["@google-cloud/functions-framework"],
    // CommonJS dependencies call require() for Node built-ins; give the ESM bundle one.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: "warning",
  });
  const bytes = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith(".mjs")).map(([f, o]) => `${f.split("/").pop()} ${(o.bytes / 1024).toFixed(0)} KiB`);
  console.log(`${name}: ${bytes.join(", ")} (${Math.round(performance.now() - started)} ms)`);
}
