// Bundles each function (functions/<name>/index.ts) into one ESM file under dist/functions/<name>/,
// with @kubernetes/client-node split into a chunk that loads on the first event, not at start, and
// the entry point that serves them (functions/runtime/main.ts) into dist/functions/main.mjs, the
// event source (functions/source/main.ts) into dist/functions/source.mjs, and
// fills the V8 code cache the entry point starts them with (functions/runtime/compile-cache.ts).
// The Functions Framework is bundled once, into dist/functions/framework.mjs, which the entry
// point and every function import in its place (scripts/bundle.ts).
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundle, FRAMEWORK_FILE } from "./bundle.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const FRAMEWORK = "@google-cloud/functions-framework";
// Chunk names carry content hashes: an earlier build's chunks would otherwise stay and ship.
rmSync(`${root}/dist/functions`, { recursive: true, force: true });
// runtime serves the functions and source is the event source (a program of its own), not functions.
const names = readdirSync(`${root}/functions`).filter(
  (n) => n !== "runtime" && n !== "source" && statSync(`${root}/functions/${n}`).isDirectory(),
);

await bundle("framework", {
  // What the product's code imports of it: registering a function, and the server for one.
  stdin: {
    contents: `export { http, cloudEvent } from "${FRAMEWORK}"; export { getFunction, getTestServer } from "${FRAMEWORK}/testing";`,
    resolveDir: root,
    loader: "js",
    sourcefile: "framework.js",
  },
  outfile: FRAMEWORK_FILE,
});
for (const name of names) {
  await bundle(name, {
    entryPoints: [`${root}/functions/${name}/index.ts`],
    outdir: `${root}/dist/functions/${name}`,
    outExtension: { ".js": ".mjs" },
    splitting: true,
  });
}
await bundle("entry point", {
  entryPoints: [`${root}/functions/runtime/main.ts`],
  outfile: `${root}/dist/functions/main.mjs`,
});
await bundle("event source", {
  entryPoints: [`${root}/functions/source/main.ts`],
  outfile: `${root}/dist/functions/source.mjs`,
});
await bundle("compile cache", {
  entryPoints: [`${root}/functions/runtime/fill-compile-cache.ts`],
  outfile: `${root}/dist/functions/fill-compile-cache.mjs`,
});
// Filled here, where the bundles are: Node keys it by their paths (the image fills its own). A
// compile cache of the developer's own (NODE_COMPILE_CACHE) or none at all is no concern of it.
const { NODE_COMPILE_CACHE: _own, NODE_DISABLE_COMPILE_CACHE: _off, ...env } = process.env;
execFileSync(process.execPath, [`${root}/dist/functions/fill-compile-cache.mjs`], { stdio: "inherit", env });
