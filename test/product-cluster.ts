// The cluster the integration and fault suites run on: a local control plane of profile knative
// (the real Knative Eventing) with the product installed from knative/ as a user installs it, its
// Knative objects Ready. Starting it is part of the test run: when it cannot start, the run fails.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ensureBinaries } from "../dev/control-plane/binaries.ts";
import { startControlPlane, type ControlPlane, type StartOptions } from "../dev/control-plane/index.ts";
import { installProduct, productReadiness } from "../dev/product.ts";

const root = fileURLToPath(new URL("../", import.meta.url));

export async function startProductCluster(extra: Pick<StartOptions, "productApiServer"> = {}): Promise<ControlPlane> {
  const started = Date.now();
  // The functions run from their bundles, as in the image.
  const build = spawnSync(process.execPath, ["scripts/build-functions.ts"], { cwd: root, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`building the function bundles failed:\n${build.stdout}${build.stderr}`);
  const controlPlane = await startControlPlane({ profile: "knative", ownerPid: process.pid, log: (l) => console.log(`[control-plane] ${l}`), ...extra });
  const objects = await installProduct(controlPlane.client, ensureBinaries().kubectl, "dynamo-pool-relay/test-install");
  const deadline = Date.now() + 120_000;
  for (;;) {
    const readiness = await productReadiness(controlPlane.client, objects);
    if (readiness.every((r) => r.ready)) break;
    if (Date.now() > deadline) {
      await controlPlane.stop();
      throw new Error(`the product's Knative objects did not go Ready:\n${readiness.filter((r) => !r.ready).map((r) => `  ${r.object}: ${r.detail}`).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`[control-plane] Knative and the product Ready in ${Date.now() - started} ms; kubeconfig ${controlPlane.kubeconfig}`);
  return controlPlane;
}
