/**
 * The functions' entry point, in place of the Functions Framework's main.js: serves the bundle's
 * function behind the body limit, preconnects to the API server, and drains on SIGTERM.
 * node dist/functions/main.mjs [--target NAME] [--source FILE] [--port PORT]
 */
import { existsSync } from "node:fs";
import { createRequire, enableCompileCache } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { COMPILE_CACHE } from "./compile-cache.ts";
import { Drain, stopOnSignals } from "./drain.ts";
import { entrySettings } from "./entry-settings.ts";
import { functionServer, type Framework } from "./server.ts";

// The code cache the build (and the image) filled beside the bundles (compile-cache.ts), turned on
// before the framework is imported: compiling it and the function's bundle is about a tenth of a
// start (npm run bench). Only where it was filled: a function never creates its directory.
const cache = fileURLToPath(new URL(COMPILE_CACHE, import.meta.url));
if (existsSync(cache)) enableCompileCache(cache);
const { getFunction, getTestServer } = await import("@google-cloud/functions-framework/testing");

const settings = entrySettings(process.argv.slice(2), process.env);
if ("error" in settings) {
  console.error(settings.error);
  process.exit(1);
}
const { target, source, port, limit } = settings;

/**
 * The framework copy `name` was registered with: the product's bundles register with the one they
 * share with this entry point (dist/functions/framework.mjs); any other source, with the framework
 * package installed beside it.
 */
function frameworkOf(name: string): Framework {
  if (getFunction(name)) return { getTestServer };
  return createRequire(import.meta.url)(
    "@google-cloud/functions-framework/testing",
  ) as typeof import("@google-cloud/functions-framework/testing");
}

const bundle = (await import(pathToFileURL(resolve(source)).href)) as { preconnect?: () => Promise<void> };
const drain = new Drain();
const server = functionServer(target, limit, frameworkOf(target), drain);
stopOnSignals(server, drain);
server.listen(port, () => {
  // While the first event is on its way (after the readiness probe), not before listening.
  void bundle.preconnect?.();
  if (process.env["NODE_ENV"] === "production") return;
  const { port: bound } = server.address() as { port: number };
  console.log(
    `Serving function...\nFunction: ${target}\nBody limit: ${limit} bytes (MAX_EVENT_BYTES)\nURL: http://localhost:${bound}/`,
  );
});
server.setTimeout(0);
