// ONE control plane of profile node (a real kubelet, containerd, runc, kube-proxy and CoreDNS; the
// images built with buildah, the product's from its Dockerfile) for every file of the node suite.
import type { TestProject } from "vitest/node";
import { startControlPlane, type ControlPlane } from "../../dev/control-plane/index.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    controlPlaneDir: string;
  }
}

let controlPlane: ControlPlane | undefined;

export async function setup(project: TestProject) {
  controlPlane = await startControlPlane({
    profile: "node",
    ownerPid: process.pid,
    log: (l) => console.log(`[control-plane] ${l}`),
    timeoutMs: 180_000,
  });
  project.provide("kubeconfig", controlPlane.kubeconfig);
  project.provide("controlPlaneDir", controlPlane.dir);
}

export async function teardown() {
  await controlPlane?.stop();
}
