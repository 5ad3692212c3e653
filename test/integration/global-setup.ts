// ONE control plane (profile node: a real node, Knative Serving and Eventing as pods) for every
// integration test file, with the product installed from knative/; each test works in its own
// namespace. (no-restarts.ts checks after each file that no pod of Knative or the product restarted.)
import type { TestProject } from "vitest/node";
import { startProductCluster, type ProductCluster } from "../product-cluster.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    controlPlaneDir: string;
    brokerIngress: string;
    logs: string;
    functionsLog: string;
    /** Where pods reach this host (the host's end of the node's link, where the API server listens). */
    hostAddress: string;
  }
}

let controlPlane: ProductCluster | undefined;

export async function setup(project: TestProject) {
  controlPlane = await startProductCluster();
  project.provide("kubeconfig", controlPlane.kubeconfig);
  project.provide("controlPlaneDir", controlPlane.dir);
  project.provide("brokerIngress", controlPlane.brokerIngress);
  project.provide("logs", controlPlane.logs);
  project.provide("functionsLog", controlPlane.functionsLog);
  project.provide("hostAddress", new URL(controlPlane.server).hostname);
}

export async function teardown() {
  await controlPlane?.stop();
}
