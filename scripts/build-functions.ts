// Bundles each function (functions/<name>/index.ts) into one ESM file under dist/functions/<name>/,
// with @kubernetes/client-node split into a chunk that loads on the first event, not at start, and
// the entry point that serves them (functions/runtime/main.ts) into dist/functions/main.mjs.
// The Functions Framework stays external: the entry point's copy must be the one functions register with.
import { build, type BuildOptions } from "esbuild";
import { readdirSync, rmSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
// Chunk names carry content hashes: an earlier build's chunks would otherwise stay and ship.
rmSync(`${root}/dist/functions`, { recursive: true, force: true });
const names = readdirSync(`${root}/functions`).filter((n) => n !== "runtime" && statSync(`${root}/functions/${n}`).isDirectory());

async function bundle(label: string, options: BuildOptions): Promise<void> {
  const started = performance.now();
  const result = await build({
    ...options,
    bundle: true,
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
  console.log(`${label}: ${bytes.join(", ")} (${Math.round(performance.now() - started)} ms)`);
}

for (const name of names) {
  await bundle(name, {
    entryPoints: [`${root}/functions/${name}/index.ts`],
    outdir: `${root}/dist/functions/${name}`,
    outExtension: { ".js": ".mjs" },
    splitting: true,
  });
}
await bundle("entry point", { entryPoints: [`${root}/functions/runtime/main.ts`], outfile: `${root}/dist/functions/main.mjs` });
