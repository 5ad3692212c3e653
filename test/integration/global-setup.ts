// ONE control plane (profile knative: the real Knative Eventing) for every integration test file,
// with the product installed from knative/; each test works in its own namespace.
// (no-refusals.ts checks after each file that the cluster-address proxy refused nothing.)
import type { TestProject } from "vitest/node";
import type { ControlPlane } from "../../dev/control-plane/index.ts";
import { startProductCluster } from "../product-cluster.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    controlPlaneDir: string;
  }
}

let controlPlane: ControlPlane | undefined;

export async function setup(project: TestProject) {
  controlPlane = await startProductCluster();
  project.provide("kubeconfig", controlPlane.kubeconfig);
  project.provide("controlPlaneDir", controlPlane.dir);
}

export async function teardown() {
  await controlPlane?.stop();
}
