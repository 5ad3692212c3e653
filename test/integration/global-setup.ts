// ONE control plane (profile knative: the real Knative Eventing) for every integration test file,
// with the product installed from knative/ as a user installs it; each test works in its own
// namespace. Starting it is part of the test run: when it cannot start, the run fails.
// (no-refusals.ts checks after each file that the cluster-address proxy refused nothing.)
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { ensureBinaries } from "../../dev/control-plane/binaries.ts";
import { startControlPlane, type ControlPlane } from "../../dev/control-plane/index.ts";
import { installProduct, productReadiness } from "../../dev/product.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    controlPlaneDir: string;
  }
}

const root = fileURLToPath(new URL("../../", import.meta.url));
let controlPlane: ControlPlane | undefined;

export async function setup(project: TestProject) {
  const started = Date.now();
  // The functions run from their bundles, as in the image.
  const build = spawnSync(process.execPath, ["scripts/build-functions.ts"], { cwd: root, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`building the function bundles failed:\n${build.stdout}${build.stderr}`);
  controlPlane = await startControlPlane({ profile: "knative", ownerPid: process.pid, log: (l) => console.log(`[control-plane] ${l}`) });
  const objects = await installProduct(controlPlane.client, ensureBinaries().kubectl, "dynamo-pool-relay/test-install");
  const deadline = Date.now() + 120_000;
  for (;;) {
    const readiness = await productReadiness(controlPlane.client, objects);
    if (readiness.every((r) => r.ready)) break;
    if (Date.now() > deadline) throw new Error(`the product's Knative objects did not go Ready:\n${readiness.filter((r) => !r.ready).map((r) => `  ${r.object}: ${r.detail}`).join("\n")}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`[control-plane] Knative and the product Ready in ${Date.now() - started} ms; kubeconfig ${controlPlane.kubeconfig}`);
  project.provide("kubeconfig", controlPlane.kubeconfig);
  project.provide("controlPlaneDir", controlPlane.dir);
}

export async function teardown() {
  await controlPlane?.stop();
}
