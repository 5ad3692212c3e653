// ONE control plane (profile full) for every integration test file; each test works in its own
// namespace. Starting it is part of the test run: when it cannot start, the run fails.
import type { TestProject } from "vitest/node";
import { startControlPlane, type ControlPlane } from "../../dev/control-plane/index.ts";

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
  }
}

let controlPlane: ControlPlane | undefined;

export async function setup(project: TestProject) {
  const started = Date.now();
  controlPlane = await startControlPlane({ profile: "full", ownerPid: process.pid, log: (l) => console.log(`[control-plane] ${l}`) });
  console.log(`[control-plane] up in ${Date.now() - started} ms; kubeconfig ${controlPlane.kubeconfig}`);
  project.provide("kubeconfig", controlPlane.kubeconfig);
}

export async function teardown() {
  await controlPlane?.stop();
}
