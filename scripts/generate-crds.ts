// Writes crds/nvidia.com_dynamopoolrelays.yaml and docs/api.md from the zod schema.
// `--check` writes nothing and exits 1 when either checked-in file differs.
import { readFileSync, writeFileSync } from "node:fs";
import { crdYaml, withApiReference, CRD_PATH, API_DOC_PATH } from "./generated.ts";

const check = process.argv.includes("--check");
let stale = 0;
for (const [path, next] of [
  [CRD_PATH, crdYaml()],
  [API_DOC_PATH, withApiReference(readFileSync(API_DOC_PATH, "utf8"))],
] as const) {
  const current = readFileSync(path, { encoding: "utf8", flag: "a+" });
  if (current === next) continue;
  stale++;
  if (check) console.error(`${path} is out of date: run npm run crds`);
  else {
    writeFileSync(path, next);
    console.log(`wrote ${path}`);
  }
}
process.exit(check && stale > 0 ? 1 : 0);
