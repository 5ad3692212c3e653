import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "yaml";
import { startControlPlane } from "../dev/control-plane/index.ts";
const cp = await startControlPlane({ profile: "api", ownerPid: process.pid });
const jsonConfig = `${cp.dir}/admin.json.kubeconfig`;
writeFileSync(jsonConfig, JSON.stringify(parse(readFileSync(cp.kubeconfig, "utf8"))));
for (const variant of (process.env["VARIANTS"] ?? "base").split(",")) {
  for (let i = 0; i < Number(process.env["N"] ?? 7); i++) {
    const out = execFileSync(process.execPath, [".tmp/reads.mjs"], { env: { ...process.env, KUBECONFIG: jsonConfig, CLIENT: `${process.cwd()}/.tmp/client-${variant}.mjs` } }).toString().trim();
    console.log(variant, out);
  }
}
await cp.stop();
process.exit(0);
