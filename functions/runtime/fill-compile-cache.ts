// node dist/functions/fill-compile-cache.mjs: fills the code cache of the bundles beside it
// (compile-cache.ts). npm run build runs it, and so does the image, where the bundles' paths are
// other than where they were built.
import { fillCompileCache } from "./compile-cache.ts";

const compiled = await fillCompileCache(new URL("./", import.meta.url));
console.log(`compile cache: ${compiled} bundles compiled`);
